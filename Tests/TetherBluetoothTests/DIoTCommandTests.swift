import Testing
import TetherBluetooth
import TetherCore

/// Requests to the DIoT command interface (ble-profiles.md B4, B7): every opcode on every table,
/// byte for byte, decoded back by the simulated sensor, and malformed requests.
@Suite("DIoT commands")
struct DIoTCommandTests {
    static let examples: [(DIoTCommand, String)] = [
        (.fetchAllFeatures, "01"), (.fetchFeature(.heartRate), "01 04"),
        (.setFeature(try! DIoTFeatureRecord(code: .temperatureAlertTriggerTop, value: .float(50))), "02 21 00 00 48 42"),
        (.cleanFeature(.temperatureAlertTriggerTop), "03 21"), (.cleanAllFeatures, "03"),
        (.fetchAllChannels, "01"), (.fetchChannel(3), "01 03"), (.setChannel(DIoTChannelRecord(channel: 3, feature: .activityStepCounter)), "02 03 12"),
        (.cleanChannel(3), "03 03"), (.cleanAllChannels, "03"),
        (.fetchAllRates, "01"), (.fetchRate(1), "01 01"), (.setRate(DIoTRateRecord(channel: 1, intervalMilliseconds: 500)), "02 01 F4 01 00 00"),
        (.cleanRate(1), "03 01"), (.cleanAllRates, "03"),
    ]

    @Test("the B7 requests, byte for byte, and back")
    func examplesRoundTrip() throws {
        for (command, text) in Self.examples {
            #expect(command.bytes == hex(text), "\(command)")
            #expect(try DIoTCommand(decoding: hex(text), table: command.table) == command)
        }
        #expect(
            Self.examples.map(\.0.characteristic.description) == [
                "C001", "C001", "C001", "C001", "C001", "C002", "C002", "C002", "C002", "C002", "C003", "C003", "C003", "C003", "C003",
            ])
    }

    @Test(
        "malformed requests are refused",
        arguments: DIoTCommand.Table.allCases.flatMap { table in ["", "00", "04", "01 02 03", "02", "02 01", "03 01 02"].map { (table, $0) } })
    func malformed(table: DIoTCommand.Table, text: String) {
        expectError(.malformedFrame) { try DIoTCommand(decoding: hex(text), table: table) }
    }

    @Test("a set with the other tables' record length is refused")
    func wrongSetLength() {
        expectError(.malformedFrame) { try DIoTCommand(decoding: hex("02 03 12"), table: .features) }
        expectError(.malformedFrame) { try DIoTCommand(decoding: hex("02 21 00 00 48 42"), table: .channels) }
        expectError(.malformedFrame) { try DIoTCommand(decoding: hex("02 03 12"), table: .rates) }
    }
}

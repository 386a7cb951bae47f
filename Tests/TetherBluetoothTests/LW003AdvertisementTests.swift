import Testing
import TetherBluetooth
import TetherCore

/// The LW003-V3 advertisement (ble-profiles.md A2): test vectors 1 and 2, recognition in a scan
/// report, and the simulator's side.
@Suite("LW003 advertisement")
struct LW003AdvertisementTests {
    static func report(_ manufacturerData: [UInt8], company: UInt16 = 0xFFFF, serviceData: [UInt8]? = [0x00]) -> BluetoothAdvertisement {
        BluetoothAdvertisement(
            localName: "LW003-3456", serviceUUIDs: [LW003GATT.advertisedService], manufacturerData: [company: manufacturerData],
            serviceData: serviceData.map { [LW003GATT.advertisedService: $0] } ?? [:])
    }

    @Test("vector 1: −4 dBm, 85 %, 3600 mV, password, 25.00 °C, 50.00 %RH, C8:47:8C:12:34:56")
    func vector1() throws {
        let onAir = hex("FF FF FC 55 0E 10 01 09 C4 13 88 C8 47 8C 12 34 56")
        let advertisement = try #require(LW003Advertisement(Self.report(Array(onAir.dropFirst(2)))))
        #expect(advertisement.txPower == -4)
        #expect(advertisement.batteryPercent == 85)
        #expect(advertisement.batteryMillivolts == 3600)
        #expect(advertisement.passwordRequired)
        #expect(advertisement.temperature == 25.0)
        #expect(advertisement.humidity == 50.0)
        #expect(advertisement.mac == "C8:47:8C:12:34:56")
        #expect(advertisement.deviceType == 0)
        #expect(try advertisement.manufacturerPayload() == Array(onAir.dropFirst(2)))
    }

    @Test("vector 2: 0 dBm, 100 %, 3300 mV, no password, −2.00 °C, humidity not available")
    func vector2() throws {
        let advertisement = try LW003Advertisement(manufacturerPayload: Array(hex("FF FF 00 64 0C E4 00 FF 38 FF FF 11 22 33 44 55 66").dropFirst(2)))
        #expect(advertisement.txPower == 0)
        #expect(advertisement.batteryPercent == 100)
        #expect(advertisement.batteryMillivolts == 3300)
        #expect(!advertisement.passwordRequired)
        #expect(advertisement.temperature == -2.0)
        #expect(advertisement.humidity == nil)
        #expect(advertisement.mac == "11:22:33:44:55:66")
    }

    @Test("both readings FFFF decode as not available and encode back as FFFF")
    func noReadings() throws {
        let payload = hex("00 64 0C E4 00 FF FF FF FF 11 22 33 44 55 66")
        let advertisement = try LW003Advertisement(manufacturerPayload: payload)
        #expect(advertisement.temperature == nil && advertisement.humidity == nil)
        #expect(try advertisement.manufacturerPayload() == payload)
    }

    @Test("recognition ignores the company id, needs exactly 15 bytes and AA0A service data")
    func recognition() {
        let payload = hex("FC 55 0E 10 01 09 C4 13 88 C8 47 8C 12 34 56")
        #expect(LW003Advertisement(Self.report(payload, company: 0x0059))?.mac == "C8:47:8C:12:34:56")
        #expect(LW003Advertisement(Self.report(payload, serviceData: [0x2A]))?.deviceType == 0x2A)
        #expect(LW003Advertisement(Self.report(payload + [0x00])) == nil)
        #expect(LW003Advertisement(Self.report(Array(payload.dropLast()))) == nil)
        #expect(LW003Advertisement(Self.report(payload, serviceData: nil)) == nil)
        #expect(LW003Advertisement(Self.report(payload, serviceData: [])) == nil)
        #expect(LW003Advertisement(BluetoothAdvertisement(localName: "LW003-3456")) == nil)
    }

    @Test("a payload that is not 15 bytes is refused as malformed", arguments: [0, 14, 16, 17])
    func wrongLength(count: Int) {
        expectError(.malformedFrame) { try LW003Advertisement(manufacturerPayload: [UInt8](repeating: 0, count: count)) }
    }

    @Test("the simulator's advertisement is recognised as the same values, its 31 bytes are the convention's")
    func simulator() throws {
        let advertisement = LW003Advertisement(
            txPower: -4, batteryPercent: 85, batteryMillivolts: 3600, passwordRequired: true, temperature: 25, humidity: 50, mac: "c8:47:8c:12:34:56")
        let report = try advertisement.advertisement()
        #expect(report.localName == "LW003-3456")
        #expect(report.manufacturerData[LW003Advertisement.simulatorCompanyIdentifier] == hex("FC 55 0E 10 01 09 C4 13 88 C8 47 8C 12 34 56"))
        var expected = advertisement
        expected.mac = "C8:47:8C:12:34:56"
        #expect(LW003Advertisement(report) == expected)
        #expect(
            try advertisement.advertisingData()
                == hex("02 01 06 03 03 0A AA 04 16 0A AA 00 12 FF FF FF FC 55 0E 10 01 09 C4 13 88 C8 47 8C 12 34 56"))
        #expect(try advertisement.advertisingData().count == 31)
    }

    @Test("readings and addresses that do not fit are refused when encoding")
    func encoderLimits() {
        var advertisement = LW003Advertisement(
            txPower: 0, batteryPercent: 1, batteryMillivolts: 1, passwordRequired: false, temperature: -0.01, humidity: nil, mac: "11:22:33:44:55:66")
        expectError(.invalidArgument) { try advertisement.manufacturerPayload() }
        advertisement.temperature = 400
        expectError(.invalidArgument) { try advertisement.manufacturerPayload() }
        advertisement.temperature = .nan
        expectError(.invalidArgument) { try advertisement.manufacturerPayload() }
        advertisement.temperature = -327.68
        #expect(throws: Never.self) { try advertisement.manufacturerPayload() }
        advertisement.humidity = -1
        expectError(.invalidArgument) { try advertisement.manufacturerPayload() }
        advertisement.humidity = 20
        advertisement.mac = "not a mac"
        expectError(.invalidArgument) { try advertisement.manufacturerPayload() }
    }
}

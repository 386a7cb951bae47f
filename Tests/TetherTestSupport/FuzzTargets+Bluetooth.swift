import TetherBluetooth
import TetherCore

extension FuzzTargets {
    /// Valid LW003-V3 values of every shape: the advertisement, frames on `AA00`–`AA04`, a
    /// multi-packet name list and a log chunk (the reference's test vectors among them).
    public static let lw003Seeds: [[UInt8]] = [
        "FC 55 0E 10 01 09 C4 13 88 C8 47 8C 12 34 56", "00 64 0C E4 00 FF 38 FF FF 11 22 33 44 55 66",
        "ED 01 01 08 4D 6F 6B 6F 34 33 32 31", "ED 01 01 01 01", "ED 01 01 01 00", "ED 02 01 01 02", "ED 00 06 02 0E 10",
        "ED 00 09 0C 00 00 30 39 00 01 51 80 00 00 27 10", "ED 01 0B 04 65 53 F1 00", "ED 01 0C 01 F5", "ED 01 20 02 00 07", "ED 00 30 00",
        "ED 02 01 2A 01 28 00 65 53 F1 00 10 11 22 33 44 55 66 C4 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 02 C5",
        "ED 02 01 20 02 10 03 65 53 FF 10 F5 AA BB CC DD EE 01 B0 02 01 06 0D 0A 65 53 FF 11 00 AA BB CC DD EE 02 A6",
        "ED 02 01 03 00 00 2A", "EE 00 99 01 00 0A 04 54 45 53 54 04 42 45 41 43", "EE 00 99 00", "EE 01 99 00 01", "EE 01 99 01 00 00",
        "04 54 45 53 54 04 42 45 41 43", Array("boot ok\nscan start\r\n".utf8).tetherHex,
    ].map { [UInt8](tetherHex: $0)! }

    /// Every LW003-V3 decoder over one input: nothing crashes, and what decodes encodes again to
    /// bytes that decode to the same value.
    public static func lw003(_ bytes: [UInt8]) -> String? {
        if let frame = try? LW003Frame(decoding: bytes) {
            if frame.bytes != bytes { return "an ED frame did not re-encode to its bytes" }
            _ = try? frame.unsignedValue()
            _ = try? frame.batteryUsage()
            _ = try? frame.textValue()
            _ = try? frame.timeZoneHalfHours()
            _ = frame.writeSucceeded
        }
        if let frame = try? LW003MultiPacketFrame(decoding: bytes) {
            guard let again = try? LW003MultiPacketFrame(decoding: frame.bytes), again == frame else { return "an EE frame changed on a round trip" }
            if case .packet(let packet) = frame {
                var assembler = LW003MultiPacketAssembler()
                if let value = try? assembler.append(packet), let list = try? LW003NameFilterList(decoding: value),
                    (try? LW003NameFilterList(decoding: list.value)) != list
                {
                    return "a name filter list changed on a round trip"
                }
            }
        }
        if let login = try? LW003Login(decoding: bytes), login.bytes != bytes { return "a login did not re-encode to its bytes" }
        if let result = try? LW003LoginResult(decoding: bytes), (try? LW003LoginResult(decoding: result.bytes)) != result {
            return "a login result changed on a round trip"
        }
        if let reason = try? LW003DisconnectReason(decoding: bytes), reason.bytes != bytes { return "a disconnect reason did not re-encode to its bytes" }
        if let frame = try? LW003StorageFrame(decoding: bytes) {
            guard let encoded = try? frame.bytes() else { return "a storage frame decoded but does not encode" }
            guard (try? LW003StorageFrame(decoding: encoded)) == frame else { return "a storage frame changed on a round trip" }
            if case .records(let records) = frame {
                guard let frames = try? LW003StorageFrame.frames(for: records), frames == [frame] else { return "records of one frame were split" }
            }
        }
        if let list = try? LW003NameFilterList(decoding: bytes), list.value != bytes { return "a name filter list did not re-encode to its bytes" }
        if let advertisement = try? LW003Advertisement(manufacturerPayload: bytes) {
            guard let payload = try? advertisement.manufacturerPayload() else { return "an advertisement decoded but does not encode" }
            guard (try? LW003Advertisement(manufacturerPayload: payload)) == advertisement else { return "an advertisement changed on a round trip" }
            let report = BluetoothAdvertisement(manufacturerData: [0x1234: bytes], serviceData: [LW003GATT.advertisedService: [7]])
            if LW003Advertisement(report)?.deviceType != 7 { return "a valid advertisement was not recognised" }
        }
        var log = LW003LogAssembler(maximumLineLength: 16)
        let lines = log.append(bytes) + log.append(bytes)
        if lines.contains(where: { $0.utf8.count > 16 * 3 }) { return "a log line grew past its limit" }
        return nil
    }

    /// Valid DIoT values: the reference's examples of every table, data, battery and requests.
    public static let diotSeeds: [[UInt8]] = [
        "0F 1E 2D 3C 4B 5A 69 78 87 96 A5 B4 C3 D2 E1 F0", "07 00 00 C8 41 04 48 00 00 00", "2B 00 F1 53 65", "09 00 00 20 C0",
        "01 E8 03 00 00 02 00 00 00 00", "01 07 02 04", "1B 01 00 00 00", "2A 00 00 00 00", "00", "5A", "01", "01 04", "02 21 00 00 48 42",
        "03 21", "03", "02 03 12", "03 03", "02 01 F4 01 00 00",
    ].map { [UInt8](tetherHex: $0)! }

    /// Every DIoT decoder over one input: nothing crashes, and what decodes encodes again to
    /// bytes that decode to the same value.
    public static func diot(_ bytes: [UInt8]) -> String? {
        if let problem = checkList(bytes, as: DIoTFeatureRecord.self) { return problem }
        if let problem = checkList(bytes, as: DIoTChannelRecord.self) { return problem }
        if let problem = checkList(bytes, as: DIoTRateRecord.self) { return problem }
        if let records = try? DIoTFeatureRecord.decodeChannelData(bytes),
            (try? DIoTFeatureRecord.decodeChannelData(DIoTFeatureRecord.channelData(records))) != records
        {
            return "channel data changed on a round trip"
        }
        for table in DIoTCommand.Table.allCases {
            guard let command = try? DIoTCommand(decoding: bytes, table: table) else { continue }
            if command.table != table { return "a \(table) request decoded as another table's" }
            if (try? DIoTCommand(decoding: command.bytes, table: table)) != command { return "a \(table) request changed on a round trip" }
        }
        if let level = try? DIoTBatteryLevel(decoding: bytes), level.bytes != bytes { return "a battery level did not re-encode to its bytes" }
        let report = BluetoothAdvertisement(localName: "DIoT", manufacturerData: [DIoTAdvertisement.companyIdentifier: bytes])
        if let advertisement = DIoTAdvertisement(report), DIoTAdvertisement(advertisement.advertisement()) != advertisement {
            return "an advertisement changed on a round trip"
        }
        return nil
    }

    private static func checkList<Record: DIoTRecord>(_ bytes: [UInt8], as: Record.Type) -> String? {
        guard let records = try? Record.decodeList(bytes) else { return nil }
        guard let notifications = try? Record.notifications(for: records, maximumLength: 20), !notifications.isEmpty else {
            return "\(Record.self) records decoded but do not encode"
        }
        var again: [Record] = []
        for notification in notifications {
            guard notification.count <= 20, let records = try? Record.decodeList(notification) else {
                return "\(Record.self) notifications are too long or do not decode"
            }
            again += records
        }
        return again == records ? nil : "\(Record.self) records changed on a round trip"
    }
}

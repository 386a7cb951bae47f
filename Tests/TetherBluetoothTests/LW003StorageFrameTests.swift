import Testing
import TetherBluetooth
import TetherCore

/// Stored scan data on `AA04` (ble-profiles.md A5): test vectors 9–11, the frame limit, splitting
/// records into frames, and malformed frames.
@Suite("LW003 storage frames")
struct LW003StorageFrameTests {
    static let iBeaconFrame = hex(
        "ED 02 01 2A 01 28 00 65 53 F1 00 10 11 22 33 44 55 66 C4 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 02 C5")
    static let twoRecordFrame = hex(
        "ED 02 01 20 02 10 03 65 53 FF 10 F5 AA BB CC DD EE 01 B0 02 01 06 0D 0A 65 53 FF 11 00 AA BB CC DD EE 02 A6")

    static func record(_ index: Int, rawLength: Int) -> LW003BeaconRecord {
        LW003BeaconRecord(
            type: LW003BeaconType.allCases[index % 11], scanTime: 1_700_000_000 + UInt32(index), timeZoneHalfHours: 16,
            mac: "AA:BB:CC:DD:EE:\(index % 10)\(index % 10)", rssi: -50, raw: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: rawLength))
    }

    @Test("vector 9: one iBeacon record, 2023-11-15 06:13:20 UTC+08:00")
    func vector9() throws {
        #expect(Self.iBeaconFrame.count == 46)
        let frame = try LW003StorageFrame(decoding: Self.iBeaconFrame)
        guard case .records(let records) = frame else {
            Issue.record("not records: \(frame)")
            return
        }
        #expect(records.count == 1)
        let record = records[0]
        #expect(record.type == .iBeacon && record.name == "iBeacon")
        #expect(record.scanTime == 1_700_000_000)
        #expect(record.timeZoneHalfHours == 16 && record.utcOffsetSeconds == 8 * 3600)
        #expect(record.localScanTime == "2023-11-15T06:13:20+08:00")
        #expect(record.mac == "11:22:33:44:55:66")
        #expect(record.rssi == -60)
        #expect(record.raw.count == 27 && record.raw.prefix(6) == [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15])
        #expect(try frame.bytes() == Self.iBeaconFrame)
    }

    @Test("vector 10: two records, Eddystone-TLM at UTC−05:30 and type 10 without raw data")
    func vector10() throws {
        let frame = try LW003StorageFrame(decoding: Self.twoRecordFrame)
        let expected = LW003StorageFrame.records([
            LW003BeaconRecord(
                type: .eddystoneTLM, scanTime: 1_700_003_600, timeZoneHalfHours: -11, mac: "AA:BB:CC:DD:EE:01", rssi: -80, raw: [0x02, 0x01, 0x06]),
            LW003BeaconRecord(type: .other, scanTime: 1_700_003_601, timeZoneHalfHours: 0, mac: "AA:BB:CC:DD:EE:02", rssi: -90, raw: []),
        ])
        #expect(frame == expected)
        guard case .records(let records) = frame else { return }
        #expect(records[0].name == "Eddystone-TLM")
        #expect(records[0].localScanTime == "2023-11-14T17:43:20-05:30")
        #expect(records[1].name == "Unknown")
        #expect(records[1].localScanTime == "2023-11-14T23:13:21Z")
        #expect(try frame.bytes() == Self.twoRecordFrame)
    }

    @Test("vector 11: the summary, 42 records in total")
    func vector11() throws {
        #expect(try LW003StorageFrame(decoding: hex("ED 02 01 03 00 00 2A")) == .summary(total: 42))
        #expect(try LW003StorageFrame.summary(total: 42).bytes() == hex("ED 02 01 03 00 00 2A"))
        #expect(try LW003StorageFrame.summary(total: 1).bytes() == hex("ED 02 01 03 00 00 01"))
    }

    @Test("every record type has the reference's name; types above 10 read as other and keep their byte")
    func typeNames() throws {
        #expect(
            LW003BeaconType.allCases.map(\.name) == [
                "iBeacon", "Eddystone-UID", "Eddystone-URL", "Eddystone-TLM", "BXP-iBeacon", "BXP-DeviceInfo", "BXP-ACC", "BXP-T&H", "BXP-Button",
                "BXP-Tag", "Unknown",
            ])
        #expect(LW003BeaconType.allCases.map(\.rawValue) == Array(UInt8(0)...10))
        var bytes = Self.iBeaconFrame
        bytes[6] = 0x63
        guard case .records(let records) = try LW003StorageFrame(decoding: bytes) else { return }
        #expect(records[0].type == .other)
        #expect(records[0].typeByte == 0x63)
        #expect(try LW003StorageFrame.records(records).bytes() == bytes)
    }

    @Test("records of every type and size are split into frames of at most 176 bytes that decode to the same records", arguments: [176, 100, 19])
    func split(maximumLength: Int) throws {
        let records = (0..<60).map { Self.record($0, rawLength: $0 * 7 % (maximumLength - 19 + 1)) }
        let frames = try LW003StorageFrame.frames(for: records, maximumLength: maximumLength)
        var decoded: [LW003BeaconRecord] = []
        for frame in frames {
            let bytes = try frame.bytes()
            #expect(bytes.count <= maximumLength)
            guard case .records(let part) = try LW003StorageFrame(decoding: bytes) else {
                Issue.record("a records frame decoded as a summary")
                return
            }
            #expect(!part.isEmpty)
            decoded += part
        }
        #expect(decoded == records)
        #expect(try LW003StorageFrame.frames(for: [], maximumLength: maximumLength).isEmpty)
    }

    @Test("a record with the most raw data fills a frame to exactly 176 bytes; one more byte does not fit")
    func largestRecord() throws {
        let largest = Self.record(1, rawLength: LW003BeaconRecord.maximumRawLength)
        #expect(try LW003StorageFrame.records([largest]).bytes().count == 176)
        expectError(.invalidArgument) { try LW003StorageFrame.frames(for: [Self.record(1, rawLength: LW003BeaconRecord.maximumRawLength + 1)]) }
        expectError(.invalidArgument) { try LW003StorageFrame.records([largest, largest]).bytes() }
        expectError(.invalidArgument) { try LW003StorageFrame.records([]).bytes() }
        expectError(.invalidArgument) { try LW003StorageFrame.frames(for: [largest], maximumLength: 18) }
        expectError(.invalidArgument) { try LW003StorageFrame.frames(for: [largest], maximumLength: 177) }
        var badMAC = largest
        badMAC.mac = "AA:BB"
        expectError(.invalidArgument) { try badMAC.bytes() }
    }

    @Test("a frame above 176 bytes is refused as too large")
    func tooLarge() {
        let bytes = [0xED, 0x02, 0x01, 0xAD, 0x01, 0xAB] + [UInt8](repeating: 0, count: 171)
        #expect(bytes.count == 177)
        expectError(.frameTooLarge) { try LW003StorageFrame(decoding: bytes) }
    }

    @Test(
        "malformed storage frames are refused",
        arguments: [
            "", "ED 02 01", "ED 02 01 00", "ED 01 01 03 00 00 2A", "ED 02 02 03 00 00 2A", "ED 02 01 04 00 00 2A", "ED 02 01 02 00 00",
            "ED 02 01 04 00 00 00 2A",
            // A record length below 13, a record past the end, fewer records than N, bytes after the records.
            "ED 02 01 0E 01 0C 00 65 53 F1 00 10 11 22 33 44 55 66",
            "ED 02 01 0F 01 0E 00 65 53 F1 00 10 11 22 33 44 55 66 C4",
            "ED 02 01 0F 02 0D 00 65 53 F1 00 10 11 22 33 44 55 66 C4",
            "ED 02 01 10 01 0D 00 65 53 F1 00 10 11 22 33 44 55 66 C4 00",
        ])
    func malformed(text: String) {
        expectError(.malformedFrame) { try LW003StorageFrame(decoding: hex(text)) }
    }
}

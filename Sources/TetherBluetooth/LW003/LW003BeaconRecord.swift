public import TetherCore

/// One beacon sighting an LW003-V3 stored and uploads on `AA04` (ble-profiles.md A5): what was
/// seen, when, where the device's clock was, from which address, how strong, and the
/// advertisement itself.
///
/// On the wire, every type has the same layout (RL excludes its own byte):
///
/// ```
/// RL | type | scan time u32 BE | time zone int8 | MAC (6) | RSSI int8 | raw (RL − 13)
/// ```
public struct LW003BeaconRecord: Hashable, Sendable {
    /// The bytes of a record without any raw data.
    public static let headerLength = 14
    /// The most raw bytes a record can carry and still fit a 176-byte storage frame alone.
    public static let maximumRawLength = LW003StorageFrame.maximumLength - 5 - headerLength

    /// The record's type byte as the device sent it. Bytes above 10 are kept as they came,
    /// so that a record re-encoded (or shown raw) is the one the device stored.
    public var typeByte: UInt8
    /// When it was seen, in Unix seconds (UTC).
    public var scanTime: UInt32
    /// The device's time zone then, in half-hours (`16` = UTC+08:00, `-11` = UTC−05:30).
    public var timeZoneHalfHours: Int8
    /// The beacon's MAC address, `11:22:33:44:55:66`.
    public var mac: String
    /// Its signal strength, in dBm.
    public var rssi: Int8
    /// What it advertised, as received (complete AD structures); not validated.
    public var raw: [UInt8]

    /// A record with these values (what a simulated device stored).
    public init(type: LW003BeaconType, scanTime: UInt32, timeZoneHalfHours: Int8, mac: String, rssi: Int8, raw: [UInt8]) {
        self.init(typeByte: type.rawValue, scanTime: scanTime, timeZoneHalfHours: timeZoneHalfHours, mac: mac, rssi: rssi, raw: raw)
    }

    /// A record with a type byte of any value, as a device may send one the table does not list.
    public init(typeByte: UInt8, scanTime: UInt32, timeZoneHalfHours: Int8, mac: String, rssi: Int8, raw: [UInt8]) {
        self.typeByte = typeByte
        self.scanTime = scanTime
        self.timeZoneHalfHours = timeZoneHalfHours
        self.mac = mac
        self.rssi = rssi
        self.raw = raw
    }

    /// The kind of beacon: the table's type for bytes 0…10, ``LW003BeaconType/other`` above.
    public var type: LW003BeaconType { LW003BeaconType(recordByte: typeByte) }

    /// The type's name as the reference writes it (`iBeacon`, `BXP-T&H`, …).
    public var name: String { type.name }

    /// The device's offset from UTC, in seconds.
    public var utcOffsetSeconds: Int { Int(timeZoneHalfHours) * 1800 }

    /// The scan time in the device's time zone, ISO 8601: `2023-11-15T06:13:20+08:00`.
    public var localScanTime: String {
        BluetoothProfileTime.iso8601(unixSeconds: Int64(scanTime), offsetSeconds: utcOffsetSeconds)
    }

    /// The number of bytes the record takes in a storage frame, its RL byte included.
    public var encodedLength: Int { Self.headerLength + raw.count }

    /// Decodes one record at the start of `bytes`; returns it and the bytes it took.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(TetherError) -> (LW003BeaconRecord, Int) {
        guard let length = bytes.first.map(Int.init) else {
            throw TetherError(.malformedFrame, "an LW003 storage frame ends where a record should start")
        }
        guard length >= 13 else {
            throw TetherError(.malformedFrame, "an LW003 record length of \(length) is below the 13 bytes of its fields")
        }
        guard bytes.count >= 1 + length else {
            throw TetherError(.malformedFrame, "an LW003 record of \(length) bytes runs past the end of its frame")
        }
        let start = bytes.startIndex
        let record = LW003BeaconRecord(
            typeByte: bytes[start + 1],
            scanTime: UInt32(truncatingIfNeeded: BluetoothProfileBytes.bigEndian(bytes, at: 2, count: 4) ?? 0),
            timeZoneHalfHours: Int8(bitPattern: bytes[start + 6]), mac: BluetoothProfileBytes.macString(bytes[(start + 7)..<(start + 13)]),
            rssi: Int8(bitPattern: bytes[start + 13]), raw: Array(bytes[(start + 14)..<(start + 1 + length)]))
        return (record, 1 + length)
    }

    /// The record as it goes into a storage frame.
    ///
    /// - Throws: `TetherError(.invalidArgument)` when the MAC address is not one or the raw data
    ///   is longer than ``maximumRawLength``.
    public func bytes() throws(TetherError) -> [UInt8] {
        let mac = try BluetoothProfileBytes.macBytes(mac, for: "LW003 record MAC")
        guard raw.count <= Self.maximumRawLength else {
            throw TetherError(.invalidArgument, "an LW003 record's \(raw.count) raw bytes do not fit a storage frame (at most \(Self.maximumRawLength))")
        }
        return [UInt8(13 + raw.count), typeByte] + BluetoothProfileBytes.bigEndianBytes(UInt64(scanTime), count: 4)
            + [UInt8(bitPattern: timeZoneHalfHours)] + mac + [UInt8(bitPattern: rssi)] + raw
    }
}

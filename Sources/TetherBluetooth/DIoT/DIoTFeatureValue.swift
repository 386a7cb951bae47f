public import TetherCore

/// The value of a DIoT feature, typed by its code (ble-profiles.md B5): every value is 4 bytes,
/// little-endian, read as ``DIoTFeatureCode/valueType``.
///
/// Floats compare by their bits, so a value (even a NaN) equals itself after a round trip.
public enum DIoTFeatureValue: Hashable, Sendable, CustomStringConvertible {
    /// An IEEE-754 float32.
    case float(Float)
    /// A signed 32-bit integer (iOS reads them unsigned, Android signed; Tether: signed).
    case int32(Int32)
    /// A boolean: byte 0 is `01` (any other byte reads as false).
    case bool(Bool)
    /// A time in Unix seconds (UTC).
    case date(UInt32)
    /// The 4 bytes as they came, for ``DIoTFeatureCode/empty`` and codes the profile does not define.
    case raw([UInt8])

    /// Reads 4 value bytes as `type`.
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless there are exactly 4 bytes.
    public init(bytes: [UInt8], as type: DIoTFeatureCode.ValueType) throws(TetherError) {
        guard bytes.count == 4, let word = BluetoothProfileBytes.littleEndianUInt32(bytes[...], at: 0) else {
            throw TetherError(.malformedFrame, "a DIoT feature value has \(bytes.count) bytes, not 4")
        }
        switch type {
        case .float: self = .float(Float(bitPattern: word))
        case .int32: self = .int32(Int32(bitPattern: word))
        case .bool: self = .bool(bytes[0] == 0x01)
        case .date: self = .date(word)
        case .raw: self = .raw(bytes)
        }
    }

    /// The type this value has.
    public var valueType: DIoTFeatureCode.ValueType {
        switch self {
        case .float: .float
        case .int32: .int32
        case .bool: .bool
        case .date: .date
        case .raw: .raw
        }
    }

    /// The 4 bytes on the wire.
    ///
    /// - Throws: `TetherError(.invalidArgument)` for a raw value that is not 4 bytes.
    public func bytes() throws(TetherError) -> [UInt8] {
        switch self {
        case .float(let value): return BluetoothProfileBytes.littleEndianBytes(value.bitPattern)
        case .int32(let value): return BluetoothProfileBytes.littleEndianBytes(UInt32(bitPattern: value))
        case .bool(let value): return [value ? 0x01 : 0x00, 0x00, 0x00, 0x00]
        case .date(let value): return BluetoothProfileBytes.littleEndianBytes(value)
        case .raw(let bytes):
            guard bytes.count == 4 else { throw TetherError(.invalidArgument, "a raw DIoT feature value has \(bytes.count) bytes, not 4") }
            return bytes
        }
    }

    /// `25.0`, `72`, `true`, `2023-11-14T22:13:20Z`, or the raw bytes in hex (`0x00000000`).
    public var description: String {
        switch self {
        case .float(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .date(let value): BluetoothProfileTime.iso8601(unixSeconds: Int64(value), offsetSeconds: 0)
        case .raw(let bytes): "0x" + bytes.tetherHex
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.float(let left), .float(let right)): left.bitPattern == right.bitPattern
        case (.int32(let left), .int32(let right)): left == right
        case (.bool(let left), .bool(let right)): left == right
        case (.date(let left), .date(let right)): left == right
        case (.raw(let left), .raw(let right)): left == right
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(valueType)
        switch self {
        case .float(let value): hasher.combine(value.bitPattern)
        case .int32(let value): hasher.combine(value)
        case .bool(let value): hasher.combine(value)
        case .date(let value): hasher.combine(value)
        case .raw(let bytes): hasher.combine(bytes)
        }
    }
}

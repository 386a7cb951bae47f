import TetherCore

/// The proto3 wire format, as much as the ESP-IDF provisioning messages need: varints and
/// length-delimited fields, read with limits (a malformed message is a typed error, never a crash).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    /// A varint field; proto3 leaves out the default (0) unless `always`.
    mutating func varint(_ field: Int, _ value: UInt64, always: Bool = false) {
        guard value != 0 || always else { return }
        tag(field, wireType: 0)
        Self.appendVarint(value, to: &bytes)
    }

    /// A length-delimited field (bytes, strings, messages); empty bytes are left out unless
    /// `always` (an empty sub-message chosen in a oneof is still written).
    mutating func lengthDelimited(_ field: Int, _ value: [UInt8], always: Bool = false) {
        guard !value.isEmpty || always else { return }
        tag(field, wireType: 2)
        Self.appendVarint(UInt64(value.count), to: &bytes)
        bytes += value
    }

    private mutating func tag(_ field: Int, wireType: UInt64) {
        Self.appendVarint(UInt64(field) << 3 | wireType, to: &bytes)
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}

/// The fields of one message: varints by field number, length-delimited values by field number
/// (the last one wins, as proto3 says for scalars; repeated fields keep all).
struct ProtobufFields {
    private(set) var varints: [Int: UInt64] = [:]
    private(set) var values: [Int: [[UInt8]]] = [:]

    init(_ bytes: [UInt8], maximumLength: Int = 16 * 1024) throws(TetherError) {
        guard bytes.count <= maximumLength else { throw TetherError(.frameTooLarge, "a provisioning message of \(bytes.count) bytes") }
        var index = 0
        while index < bytes.count {
            let key = try Self.readVarint(bytes, &index)
            let field = Int(key >> 3)
            guard field > 0, field < 1 << 20 else { throw TetherError(.malformedFrame, "a protobuf field number \(field)") }
            switch key & 7 {
            case 0:
                varints[field] = try Self.readVarint(bytes, &index)
            case 2:
                let length = try Self.readVarint(bytes, &index)
                guard length <= UInt64(bytes.count - index) else { throw TetherError(.malformedFrame, "a protobuf field longer than its message") }
                values[field, default: []].append(Array(bytes[index..<(index + Int(length))]))
                index += Int(length)
            case 1:
                guard bytes.count - index >= 8 else { throw TetherError(.malformedFrame, "a truncated 64-bit protobuf field") }
                index += 8
            case 5:
                guard bytes.count - index >= 4 else { throw TetherError(.malformedFrame, "a truncated 32-bit protobuf field") }
                index += 4
            default:
                throw TetherError(.malformedFrame, "protobuf wire type \(key & 7)")
            }
        }
    }

    func varint(_ field: Int) -> UInt64 { varints[field] ?? 0 }
    func bytes(_ field: Int) -> [UInt8]? { values[field]?.last }
    func all(_ field: Int) -> [[UInt8]] { values[field] ?? [] }
    func has(_ field: Int) -> Bool { values[field] != nil || varints[field] != nil }

    static func readVarint(_ bytes: [UInt8], _ index: inout Int) throws(TetherError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < bytes.count else { throw TetherError(.malformedFrame, "a truncated protobuf varint") }
            let byte = bytes[index]
            index += 1
            guard shift < 64 else { throw TetherError(.malformedFrame, "a protobuf varint longer than 10 bytes") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
}

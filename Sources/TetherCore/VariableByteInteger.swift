public import NIOCore

/// The variable-length integer of the MQTT "remaining length", which the GAgent LAN frame uses
/// for its length too: 7 bits a byte, least-significant group first, bit 7 set on every byte but
/// the last, 1 to 4 bytes.
public enum VariableByteInteger {
    /// The largest value four bytes can carry, 2²⁸ − 1.
    public static let maximum = 268_435_455

    /// The outcome of ``read(from:at:)``.
    public enum Read: Equatable, Sendable {
        /// The decoded value and how many bytes (1 to 4) it took.
        case value(Int, byteCount: Int)
        /// The buffer ends before the last byte of the integer.
        case needMoreBytes
        /// A fourth byte that still has its continuation bit set.
        case tooLong
    }

    /// Reads at `index` without moving the reader index.
    public static func read(from buffer: ByteBuffer, at index: Int) -> Read {
        var value = 0
        for position in 0..<4 {
            guard let byte = buffer.getInteger(at: index + position, as: UInt8.self) else { return .needMoreBytes }
            value |= Int(byte & 0x7F) << (7 * position)
            if byte & 0x80 == 0 { return .value(value, byteCount: position + 1) }
        }
        return .tooLong
    }

    /// Appends `value` (0…``maximum``); returns the bytes written.
    @discardableResult
    public static func write(_ value: Int, to buffer: inout ByteBuffer) -> Int {
        precondition(value >= 0 && value <= maximum, "variable byte integer out of range")
        var remaining = value
        var written = 0
        repeat {
            var byte = UInt8(remaining & 0x7F)
            remaining >>= 7
            if remaining > 0 { byte |= 0x80 }
            buffer.writeInteger(byte)
            written += 1
        } while remaining > 0
        return written
    }

    /// Bytes ``write(_:to:)`` uses for `value`: 1 to 4.
    public static func size(of value: Int) -> Int {
        value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4
    }
}

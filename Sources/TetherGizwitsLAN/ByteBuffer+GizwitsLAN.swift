public import NIOCore
import TetherCore

/// The outcome of reading a variable-length integer that may be incomplete.
enum GizwitsVarintRead: Equatable {
    case value(Int, byteCount: Int)
    case needMoreBytes
}

extension ByteBuffer {
    /// Writes the GAgent frame length: 7 bits a byte, least-significant group first, bit 7 set on
    /// every byte but the last (the MQTT "remaining length" encoding). Returns the bytes written.
    @discardableResult
    public mutating func gizwitsWriteVarint(_ value: Int) -> Int {
        precondition(value >= 0 && value <= GizwitsLANFrame.maximumLength, "varint out of range")
        var remaining = value
        var written = 0
        repeat {
            var byte = UInt8(remaining & 0x7F)
            remaining >>= 7
            if remaining > 0 { byte |= 0x80 }
            writeInteger(byte)
            written += 1
        } while remaining > 0
        return written
    }

    /// Reads a varint at `index` without moving the reader index. Throws after a fourth byte that
    /// still has its continuation bit set.
    func gizwitsGetVarint(at index: Int) throws(TetherError) -> GizwitsVarintRead {
        var value = 0
        for position in 0..<4 {
            guard let byte = getInteger(at: index + position, as: UInt8.self) else { return .needMoreBytes }
            value |= Int(byte & 0x7F) << (7 * position)
            if byte & 0x80 == 0 { return .value(value, byteCount: position + 1) }
        }
        throw TetherError(.malformedFrame, "frame length uses more than 4 bytes")
    }

    /// Reads `u16 BE length · bytes` (the GAgent string field); nil when the buffer is too short.
    mutating func gizwitsReadLengthPrefixedBytes() -> [UInt8]? {
        let start = readerIndex
        guard let length = readInteger(as: UInt16.self), let bytes = readBytes(length: Int(length)) else {
            moveReaderIndex(to: start)
            return nil
        }
        return bytes
    }

    /// Writes `u16 BE length · bytes`; anything past 65 535 bytes cannot be described and is cut.
    mutating func gizwitsWriteLengthPrefixed(_ bytes: some Collection<UInt8>) {
        let fitting = bytes.prefix(Int(UInt16.max))
        writeInteger(UInt16(fitting.count))
        writeBytes(fitting)
    }
}

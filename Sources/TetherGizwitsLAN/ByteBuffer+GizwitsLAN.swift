public import NIOCore
import TetherCore

extension ByteBuffer {
    /// Writes the GAgent frame length (the MQTT "remaining length" encoding). Returns the bytes written.
    @discardableResult
    public mutating func gizwitsWriteVarint(_ value: Int) -> Int {
        VariableByteInteger.write(value, to: &self)
    }

    /// Reads a varint at `index` without moving the reader index. Throws after a fourth byte that
    /// still has its continuation bit set.
    func gizwitsGetVarint(at index: Int) throws(TetherError) -> VariableByteInteger.Read {
        let read = VariableByteInteger.read(from: self, at: index)
        if read == .tooLong { throw TetherError(.malformedFrame, "frame length uses more than 4 bytes") }
        return read
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

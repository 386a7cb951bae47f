import NIOCore
import TetherCore

/// Writes values in D-Bus's wire format, little-endian, aligned from `base` (the start of the
/// message).
struct DBusWriter {
    var buffer: ByteBuffer
    let base: Int

    /// The most bytes an array may hold.
    static let maximumArrayLength = 1 << 26

    init(buffer: ByteBuffer) {
        self.buffer = buffer
        self.base = buffer.writerIndex
    }

    mutating func pad(to alignment: Int) {
        let offset = (buffer.writerIndex - base) % alignment
        if offset != 0 { buffer.writeRepeatingByte(0, count: alignment - offset) }
    }

    mutating func write(_ value: DBusValue) throws(TetherError) {
        pad(to: value.type.alignment)
        switch value {
        case .byte(let byte): buffer.writeInteger(byte)
        case .boolean(let flag): buffer.writeInteger(UInt32(flag ? 1 : 0), endianness: .little)
        case .int16(let number): buffer.writeInteger(number, endianness: .little)
        case .uint16(let number): buffer.writeInteger(number, endianness: .little)
        case .int32(let number): buffer.writeInteger(number, endianness: .little)
        case .uint32(let number), .unixFD(let number): buffer.writeInteger(number, endianness: .little)
        case .int64(let number): buffer.writeInteger(number, endianness: .little)
        case .uint64(let number): buffer.writeInteger(number, endianness: .little)
        case .double(let number): buffer.writeInteger(number.bitPattern, endianness: .little)
        case .string(let text):
            try writeString(text)
        case .objectPath(let path):
            guard DBusNames.isObjectPath(path) else { throw Self.invalid("\"\(path.prefix(64))\" is not an object path") }
            try writeString(path)
        case .signature(let signature):
            try writeSignature(signature)
        case .array(let element, let elements):
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(UInt32(0), endianness: .little)
            pad(to: element.alignment)
            let start = buffer.writerIndex
            for item in elements {
                guard item.type == element else {
                    throw Self.invalid("an array of \(element) holds a \(item.type)")
                }
                try write(item)
            }
            let length = buffer.writerIndex - start
            guard length <= Self.maximumArrayLength else { throw Self.invalid("an array is longer than 64 MiB") }
            buffer.setInteger(UInt32(length), at: lengthIndex, endianness: .little)
        case .structure(let members):
            guard !members.isEmpty else { throw Self.invalid("a structure has no members") }
            for member in members { try write(member) }
        case .dictionaryEntry(let key, let entry):
            guard key.type.isBasic else { throw Self.invalid("a dictionary key is not a basic type") }
            try write(key)
            try write(entry)
        case .variant(let inner):
            try writeSignature(DBusSignature([inner.type]))
            try write(inner)
        }
    }

    mutating func writeString(_ text: String) throws(TetherError) {
        guard !text.utf8.contains(0) else { throw Self.invalid("a string holds a NUL byte") }
        buffer.writeInteger(UInt32(text.utf8.count), endianness: .little)
        buffer.writeString(text)
        buffer.writeInteger(UInt8(0))
    }

    mutating func writeSignature(_ signature: DBusSignature) throws(TetherError) {
        let text = signature.description
        guard text.utf8.count <= DBusSignature.maximumLength else { throw Self.invalid("a signature is longer than 255 bytes") }
        buffer.writeInteger(UInt8(text.utf8.count))
        buffer.writeString(text)
        buffer.writeInteger(UInt8(0))
    }

    static func invalid(_ what: String) -> TetherError {
        TetherError(.invalidArgument, "a D-Bus value cannot be sent: \(what)")
    }
}

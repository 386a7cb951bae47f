import NIOCore
import TetherCore

/// Reads values in D-Bus's wire format from one message's bytes (reader index 0 is the start of
/// the message), refusing what the specification refuses: non-zero padding, booleans other than
/// 0 and 1, strings that are not UTF-8 or hold NUL, arrays over 64 MiB, nesting over 64.
struct DBusReader {
    var buffer: ByteBuffer
    let endianness: Endianness
    /// Containers (arrays, structures, variants) open around the value being read.
    private var depth = 0

    static let maximumDepth = 64

    init(buffer: ByteBuffer, endianness: Endianness) {
        self.buffer = buffer
        self.endianness = endianness
    }

    var offset: Int { buffer.readerIndex }

    mutating func align(_ alignment: Int) throws(TetherError) {
        let remainder = buffer.readerIndex % alignment
        guard remainder != 0 else { return }
        let count = alignment - remainder
        guard let padding = buffer.readBytes(length: count) else { throw Self.malformed("ends inside padding") }
        guard padding.allSatisfy({ $0 == 0 }) else { throw Self.malformed("has non-zero padding") }
    }

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type = Integer.self) throws(TetherError) -> Integer {
        try align(MemoryLayout<Integer>.size)
        guard let value = buffer.readInteger(endianness: endianness, as: Integer.self) else { throw Self.malformed("ends inside a number") }
        return value
    }

    mutating func read(_ type: DBusType) throws(TetherError) -> DBusValue {
        switch type {
        case .byte: return .byte(try integer())
        case .boolean:
            let raw: UInt32 = try integer()
            guard raw <= 1 else { throw Self.malformed("has a boolean of \(raw)") }
            return .boolean(raw == 1)
        case .int16: return .int16(try integer())
        case .uint16: return .uint16(try integer())
        case .int32: return .int32(try integer())
        case .uint32: return .uint32(try integer())
        case .int64: return .int64(try integer())
        case .uint64: return .uint64(try integer())
        case .double: return .double(Double(bitPattern: try integer()))
        case .unixFD: return .unixFD(try integer())
        case .string: return .string(try string())
        case .objectPath:
            let path = try string()
            guard DBusNames.isObjectPath(path) else { throw Self.malformed("has an invalid object path") }
            return .objectPath(path)
        case .signature: return .signature(try signature())
        case .array(let element):
            let length: UInt32 = try integer()
            guard length <= DBusWriter.maximumArrayLength else { throw Self.malformed("has an array longer than 64 MiB") }
            try align(element.alignment)
            let end = buffer.readerIndex + Int(length)
            guard end <= buffer.writerIndex else { throw Self.malformed("has an array longer than the message") }
            try enter()
            defer { depth -= 1 }
            var elements: [DBusValue] = []
            while buffer.readerIndex < end {
                elements.append(try read(element))
            }
            guard buffer.readerIndex == end else { throw Self.malformed("has an array whose elements overrun its length") }
            return .array(element, elements)
        case .structure(let members):
            try align(8)
            try enter()
            defer { depth -= 1 }
            var values: [DBusValue] = []
            for member in members { values.append(try read(member)) }
            return .structure(values)
        case .dictionaryEntry(let key, let value):
            try align(8)
            try enter()
            defer { depth -= 1 }
            return .dictionaryEntry(try read(key), try read(value))
        case .variant:
            let inner = try signature()
            guard inner.types.count == 1 else { throw Self.malformed("has a variant that is not exactly one type") }
            try enter()
            defer { depth -= 1 }
            return .variant(try read(inner.types[0]))
        }
    }

    private mutating func enter() throws(TetherError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Self.malformed("nests values more than \(Self.maximumDepth) deep") }
    }

    mutating func string() throws(TetherError) -> String {
        let length: UInt32 = try integer()
        guard length < buffer.readableBytes, let bytes = buffer.readBytes(length: Int(length)), let nul = buffer.readInteger(as: UInt8.self) else {
            throw Self.malformed("has a string longer than the message")
        }
        guard nul == 0, !bytes.contains(0) else { throw Self.malformed("has a string that is not NUL-terminated or holds NUL") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Self.malformed("has a string that is not UTF-8") }
        return text
    }

    mutating func signature() throws(TetherError) -> DBusSignature {
        guard let length = buffer.readInteger(as: UInt8.self), let bytes = buffer.readBytes(length: Int(length)), let nul = buffer.readInteger(as: UInt8.self)
        else {
            throw Self.malformed("has a signature longer than the message")
        }
        guard nul == 0, let text = String(validating: bytes, as: UTF8.self) else { throw Self.malformed("has a signature that is not NUL-terminated") }
        return try DBusSignature(text)
    }

    static func malformed(_ what: String) -> TetherError {
        TetherError(.malformedFrame, "a D-Bus message \(what)")
    }
}

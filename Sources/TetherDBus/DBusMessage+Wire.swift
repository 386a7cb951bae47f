public import NIOCore
public import TetherCore

extension DBusMessage {
    /// The largest message the specification allows (128 MiB).
    public static let maximumLength = 1 << 27

    private enum HeaderField: UInt8 {
        case path = 1, interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    /// Appends the message, little-endian, as it goes on the wire. The serial must be set.
    public func write(into buffer: inout ByteBuffer) throws(TetherError) {
        try validate()
        var fields: [DBusValue] = []
        func field(_ code: HeaderField, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(code.rawValue), .variant(value)])) }
        }
        field(.path, path.map(DBusValue.objectPath))
        field(.interface, interface.map(DBusValue.string))
        field(.member, member.map(DBusValue.string))
        field(.errorName, errorName.map(DBusValue.string))
        field(.replySerial, replySerial.map(DBusValue.uint32))
        field(.destination, destination.map(DBusValue.string))
        field(.sender, sender.map(DBusValue.string))
        if !body.isEmpty { field(.signature, .signature(signature)) }

        var writer = DBusWriter(buffer: buffer)
        writer.buffer.writeInteger(UInt8(ascii: "l"))
        writer.buffer.writeInteger(kind.rawValue)
        writer.buffer.writeInteger(flags.rawValue)
        writer.buffer.writeInteger(UInt8(1))
        let bodyLengthIndex = writer.buffer.writerIndex
        writer.buffer.writeInteger(UInt32(0), endianness: .little)
        writer.buffer.writeInteger(serial, endianness: .little)
        try writer.write(.array(.structure([.byte, .variant]), fields))
        writer.pad(to: 8)
        let bodyStart = writer.buffer.writerIndex
        for value in body { try writer.write(value) }
        let bodyLength = writer.buffer.writerIndex - bodyStart
        guard writer.buffer.writerIndex - writer.base <= Self.maximumLength else {
            throw TetherError(.invalidArgument, "a D-Bus message would be longer than 128 MiB")
        }
        writer.buffer.setInteger(UInt32(bodyLength), at: bodyLengthIndex, endianness: .little)
        buffer = writer.buffer
    }

    /// The message's wire bytes.
    public func bytes() throws(TetherError) -> ByteBuffer {
        var buffer = ByteBuffer()
        try write(into: &buffer)
        return buffer
    }

    /// Reads one message from the front of `buffer`: nil (and nothing consumed) until all of it
    /// has arrived; a typed error for anything malformed or longer than `maximumLength`.
    public static func read(from buffer: inout ByteBuffer, maximumLength: Int = DBusMessage.maximumLength) throws(TetherError) -> DBusMessage? {
        guard buffer.readableBytes >= 16 else { return nil }
        let start = buffer.readerIndex
        let endianness: Endianness
        switch buffer.getInteger(at: start, as: UInt8.self) {
        case UInt8(ascii: "l"): endianness = .little
        case UInt8(ascii: "B"): endianness = .big
        default: throw DBusReader.malformed("has an unknown byte order")
        }
        guard buffer.getInteger(at: start + 3, as: UInt8.self) == 1 else {
            throw TetherError(.unsupportedVersion, "a D-Bus message has a protocol version other than 1")
        }
        let bodyLength = Int(buffer.getInteger(at: start + 4, endianness: endianness, as: UInt32.self)!)
        let fieldsLength = Int(buffer.getInteger(at: start + 12, endianness: endianness, as: UInt32.self)!)
        guard fieldsLength <= DBusWriter.maximumArrayLength else { throw DBusReader.malformed("has header fields longer than 64 MiB") }
        let headerLength = (16 + fieldsLength + 7) & ~7
        let total = headerLength + bodyLength
        guard total <= min(maximumLength, Self.maximumLength) else {
            throw TetherError(.frameTooLarge, "a D-Bus message of \(total) bytes is over the limit of \(min(maximumLength, Self.maximumLength))")
        }
        guard buffer.readableBytes >= total, let bytes = buffer.getSlice(at: start, length: total) else { return nil }
        let message = try parse(bytes, endianness: endianness, headerLength: headerLength)
        buffer.moveReaderIndex(forwardBy: total)
        return message
    }

    private static func parse(_ bytes: ByteBuffer, endianness: Endianness, headerLength: Int) throws(TetherError) -> DBusMessage {
        var reader = DBusReader(buffer: bytes, endianness: endianness)
        reader.buffer.moveReaderIndex(forwardBy: 1)
        guard let kind = Kind(rawValue: try reader.integer()) else { throw DBusReader.malformed("has an unknown message type") }
        let flags = Flags(rawValue: try reader.integer() as UInt8)
        reader.buffer.moveReaderIndex(forwardBy: 1)
        let bodyLength: UInt32 = try reader.integer()
        let serial: UInt32 = try reader.integer()
        guard serial != 0 else { throw DBusReader.malformed("has serial 0") }
        guard case .array(_, let fields) = try reader.read(.array(.structure([.byte, .variant]))) else {
            throw DBusReader.malformed("has no header fields")
        }
        try reader.align(8)
        guard reader.offset == headerLength else { throw DBusReader.malformed("has header fields that overrun their length") }

        var message = DBusMessage(kind: kind, flags: flags, serial: serial)
        var signature = DBusSignature([])
        for case .structure(let members) in fields {
            guard members.count == 2, case .byte(let code) = members[0], case .variant(let value) = members[1] else { continue }
            // Unknown fields are ignored, as the specification asks; known ones must have their type.
            guard let field = HeaderField(rawValue: code) else { continue }
            switch (field, value) {
            case (.path, .objectPath(let path)): message.path = path
            case (.interface, .string(let name)): message.interface = name
            case (.member, .string(let name)): message.member = name
            case (.errorName, .string(let name)): message.errorName = name
            case (.replySerial, .uint32(let number)): message.replySerial = number
            case (.destination, .string(let name)): message.destination = name
            case (.sender, .string(let name)): message.sender = name
            case (.signature, .signature(let types)): signature = types
            case (.unixFDs, .uint32(let count)):
                guard count == 0 else { throw DBusReader.malformed("carries file descriptors, which were not negotiated") }
            default: throw DBusReader.malformed("has a header field \(code) of type \(value.type)")
            }
        }
        for type in signature.types {
            message.body.append(try reader.read(type))
        }
        guard reader.offset == headerLength + Int(bodyLength) else { throw DBusReader.malformed("has a body that does not match its signature") }
        try message.validate(malformed: true)
        return message
    }

    /// The fields each kind requires, and the syntax of names: what a bus would refuse.
    func validate(malformed: Bool = false, serialSet: Bool = true) throws(TetherError) {
        func problem(_ what: String) -> TetherError {
            malformed ? DBusReader.malformed(what) : TetherError(.invalidArgument, "a D-Bus message cannot be sent: it \(what)")
        }
        switch kind {
        case .methodCall:
            guard path != nil, member != nil else { throw problem("is a method call without a path or member") }
        case .signal:
            guard path != nil, interface != nil, member != nil else { throw problem("is a signal without a path, interface or member") }
        case .methodReturn:
            guard replySerial != nil else { throw problem("is a reply without a reply serial") }
        case .error:
            guard errorName != nil, replySerial != nil else { throw problem("is an error without a name or reply serial") }
        }
        if let path, !DBusNames.isObjectPath(path) { throw problem("has an invalid object path") }
        if let interface, !DBusNames.isInterfaceName(interface) { throw problem("has an invalid interface name") }
        if let errorName, !DBusNames.isInterfaceName(errorName) { throw problem("has an invalid error name") }
        if let member, !DBusNames.isMemberName(member) { throw problem("has an invalid member name") }
        if let destination, !DBusNames.isBusName(destination) { throw problem("has an invalid destination") }
        if let sender, !DBusNames.isBusName(sender) { throw problem("has an invalid sender") }
        if !malformed, serialSet, serial == 0 { throw problem("has no serial") }
    }
}

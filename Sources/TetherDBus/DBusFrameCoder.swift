import NIOCore
import TetherCore

/// What the bus sends a client: first the lines of its authentication (SASL), then messages.
enum DBusInbound: Hashable, Sendable {
    case authenticationLine(String)
    case message(DBusMessage)
}

/// What a client sends: its authentication text, then messages.
enum DBusOutbound: Sendable {
    case authentication(String)
    case message(DBusMessage)
}

/// Splits the bus's bytes into authentication lines until `OK`, then into messages (the bus
/// sends nothing after `OK` until the client has sent `BEGIN`, so the switch cannot be early).
struct DBusFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = DBusInbound

    /// The longest authentication line accepted.
    static let maximumLineLength = 1024

    let maximumMessageLength: Int
    private var authenticated = false

    init(maximumMessageLength: Int, authenticated: Bool = false) {
        self.maximumMessageLength = maximumMessageLength
        self.authenticated = authenticated
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let inbound = try next(&buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(inbound))
        return .continue
    }

    /// The next line or message, or nil until it has all arrived.
    mutating func next(_ buffer: inout ByteBuffer) throws(TetherError) -> DBusInbound? {
        if authenticated {
            return try DBusMessage.read(from: &buffer, maximumLength: maximumMessageLength).map(DBusInbound.message)
        }
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if view.count > Self.maximumLineLength { throw TetherError(.frameTooLarge, "the bus sent an authentication line over 1 KiB") }
            return nil
        }
        let length = newline - view.startIndex + 1
        guard length <= Self.maximumLineLength, var line = buffer.readString(length: length) else {
            throw TetherError(.frameTooLarge, "the bus sent an authentication line over 1 KiB")
        }
        line.removeLast()
        if line.hasSuffix("\r") { line.removeLast() }
        if line.hasPrefix("OK ") || line == "OK" { authenticated = true }
        return .authenticationLine(line)
    }
}

/// Writes authentication text and messages.
struct DBusFrameEncoder: MessageToByteEncoder {
    typealias OutboundIn = DBusOutbound

    func encode(data: DBusOutbound, out: inout ByteBuffer) throws {
        switch data {
        case .authentication(let text): out.writeString(text)
        case .message(let message): try message.write(into: &out)
        }
    }
}

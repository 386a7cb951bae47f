import NIOCore

/// One SMTP reply: a three-digit code and its text lines (`250-first`, …, `250 last`).
struct SMTPReply: Sendable, Equatable {
    var code: Int
    var lines: [String]

    var isPositive: Bool { (200..<400).contains(code) }
    var text: String { lines.joined(separator: " ") }
}

/// Reads SMTP replies from a byte stream (RFC 5321 §4.2): nil while a reply is incomplete,
/// a typed error for anything that is not a reply. Lines and replies are size-limited, so a
/// hostile server cannot make the client buffer without bound.
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply

    static let maximumLineLength = 2048
    static let maximumLines = 128

    struct DecodingError: Error, Equatable {
        var reason: String
    }

    func decode(buffer: inout ByteBuffer) throws -> SMTPReply? {
        var view: ByteBufferView = buffer.readableBytesView
        var lines: [String] = []
        var code: Int?
        while true {
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                if view.count > Self.maximumLineLength { throw DecodingError(reason: "reply line longer than \(Self.maximumLineLength) bytes") }
                return nil
            }
            var line = view[view.startIndex..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard line.count <= Self.maximumLineLength else { throw DecodingError(reason: "reply line longer than \(Self.maximumLineLength) bytes") }
            guard line.count >= 3, let lineCode = Self.code(line) else {
                throw DecodingError(reason: "not an SMTP reply line")
            }
            if let code, code != lineCode { throw DecodingError(reason: "reply lines with different codes") }
            code = lineCode
            let separator = line.count > 3 ? line[line.startIndex + 3] : UInt8(ascii: " ")
            guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
                throw DecodingError(reason: "reply code not followed by a space or hyphen")
            }
            lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
            guard lines.count <= Self.maximumLines else { throw DecodingError(reason: "reply longer than \(Self.maximumLines) lines") }
            view = view[(newline + 1)...]
            if separator == UInt8(ascii: " ") {
                buffer.moveReaderIndex(forwardBy: view.startIndex - buffer.readableBytesView.startIndex)
                return SMTPReply(code: lineCode, lines: lines)
            }
        }
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let reply = try decode(buffer: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(reply))
        return .continue
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }

    private static func code(_ line: ByteBufferView) -> Int? {
        var value = 0
        for byte in line.prefix(3) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return (200...599).contains(value) ? value : nil
    }
}

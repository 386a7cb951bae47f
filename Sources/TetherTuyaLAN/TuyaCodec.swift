import Crypto
public import NIOCore
public import TetherCore

/// One message of the Tuya local protocol, with its payload in clear.
public struct TuyaMessage: Hashable, Sendable {
    public var sequence: UInt32
    public var command: TuyaCommand
    /// Device → app frames only: 0 is success.
    public var returnCode: UInt32?
    /// The clear payload: JSON for data-plane commands, raw bytes for the negotiation.
    public var payload: [UInt8]

    public init(sequence: UInt32, command: TuyaCommand, returnCode: UInt32? = nil, payload: [UInt8] = []) {
        self.sequence = sequence
        self.command = command
        self.returnCode = returnCode
        self.payload = payload
    }
}

/// The frames one side of a connection writes and the frames it reads from the other side, for
/// one version and key (§2–§3): pure value code over `ByteBuffer`.
///
/// `key` is the local key, and on 3.4/3.5 the session key once negotiated (``TuyaHandshake``).
/// `sender` is who *this* side is: a device writes a return code in every frame, an app reads one.
public struct TuyaCodec: Sendable, CustomStringConvertible, CustomReflectable {
    public enum Side: Sendable, Hashable {
        case app
        case device
    }

    public var version: TuyaVersion
    public var key: [UInt8]
    public var sender: Side
    public var maximumFrameLength: Int

    public init(version: TuyaVersion, key: [UInt8], sender: Side, maximumFrameLength: Int = 64 * 1024) throws(TetherError) {
        try TuyaCrypto.checkKey(key)
        self.version = version
        self.key = key
        self.sender = sender
        self.maximumFrameLength = maximumFrameLength
    }

    /// The key stays out of descriptions and mirrors.
    public var description: String { "TuyaCodec(\(version), \(sender), key: <redacted>)" }
    public var customMirror: Mirror { Mirror(self, children: ["version": version, "sender": sender, "key": "<redacted>"]) }

    var integrity: TuyaFrame.Integrity {
        switch version {
        case .v31, .v32, .v33: .crc32
        case .v34: .hmac(key)
        case .v35: .gcm(key)
        }
    }

    /// The 15-byte version header: `"3.x"` and twelve zero bytes.
    var versionHeader: [UInt8] { version.bytes + [UInt8](repeating: 0, count: 12) }

    // MARK: Writing

    /// The message as one frame. `iv` is the 12-byte GCM nonce on 3.5 (random by default: it must
    /// never repeat under one key).
    public func encode(_ message: TuyaMessage, iv: [UInt8]? = nil) throws(TetherError) -> ByteBuffer {
        var body: [UInt8] = []
        let returnCode: [UInt8] = sender == .device ? Self.bigEndian(message.returnCode ?? 0) : []
        let header = message.command.hasVersionHeader ? versionHeader : []
        switch version {
        case .v31:
            body = returnCode + (message.command == .control && sender == .app ? try signed31(message.payload) : message.payload)
        case .v32, .v33:
            body = returnCode + (message.payload.isEmpty ? [] : header + (try TuyaCrypto.ecbEncrypt(message.payload, key: key)))
        case .v34:
            body = returnCode + (try TuyaCrypto.ecbEncrypt(header + message.payload, key: key))
        case .v35:
            body = returnCode + header + message.payload
        }
        var buffer = ByteBuffer()
        try TuyaFrame(sequence: message.sequence, command: message.command, body: body).write(
            to: &buffer, integrity: integrity, iv: version == .v35 ? iv ?? Self.randomIV() : nil)
        return buffer
    }

    /// 3.1's `CONTROL`: `"3.1" ‖ md5hex("data=" + B + "||lpv=3.1||" + key)[8..<24] ‖ B`, with B the
    /// Base64 of the ECB ciphertext.
    private func signed31(_ payload: [UInt8]) throws(TetherError) -> [UInt8] {
        let encoded = try TuyaCrypto.ecbEncrypt(payload, key: key).tetherBase64
        return Array("3.1".utf8) + signature31(encoded) + Array(encoded.utf8)
    }

    private func signature31(_ encoded: String) -> [UInt8] {
        let digest = TuyaCrypto.md5(Array("data=\(encoded)||lpv=3.1||".utf8) + key).tetherHex
        return Array(digest.utf8.dropFirst(8).prefix(16))
    }

    // MARK: Reading

    /// The next message the other side sent, or nil until its whole frame has arrived (nothing
    /// is consumed then). Throws for frames that are malformed, too large, fail their check, or
    /// do not decrypt with the key.
    public func decode(_ buffer: inout ByteBuffer) throws(TetherError) -> TuyaMessage? {
        guard let frame = try TuyaFrame.read(from: &buffer, integrity: integrity, maximumLength: maximumFrameLength) else { return nil }
        var body = frame.body[...]
        var returnCode: UInt32?
        // Devices put a return code first; a few firmware pushes leave it out, which shows as
        // payload bytes where a small integer would be.
        if sender == .app, body.count >= 4, body.prefix(3).allSatisfy({ $0 == 0 }) {
            returnCode = body.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
            body = body.dropFirst(4)
        }
        let payload: [UInt8]
        switch version {
        case .v31: payload = try open31(body, command: frame.command)
        case .v32, .v33: payload = try open33(body)
        case .v34: payload = body.isEmpty ? [] : stripHeader(try TuyaCrypto.ecbDecrypt(body, key: key))
        case .v35: payload = stripHeader(Array(body))
        }
        return TuyaMessage(sequence: frame.sequence, command: frame.command, returnCode: returnCode, payload: payload)
    }

    private func open31(_ body: ArraySlice<UInt8>, command: TuyaCommand) throws(TetherError) -> [UInt8] {
        guard body.starts(with: version.bytes), body.count >= 19 else { return Array(body) }
        let encoded = String(decoding: body.dropFirst(19), as: UTF8.self)
        guard TuyaCrypto.constantTimeEquals(body.dropFirst(3).prefix(16), signature31(encoded)) else {
            throw TetherError(.integrityCheckFailed, "a 3.1 payload whose MD5 signature does not match (another key?)")
        }
        guard let ciphertext = [UInt8](tetherBase64: encoded) else { throw TetherError(.malformedPayload, "a 3.1 payload that is not Base64") }
        return try TuyaCrypto.ecbDecrypt(ciphertext, key: key)
    }

    private func open33(_ body: ArraySlice<UInt8>) throws(TetherError) -> [UInt8] {
        let ciphertext = body.starts(with: version.bytes) && body.count >= 15 ? body.dropFirst(15) : body
        guard !ciphertext.isEmpty else { return [] }
        do {
            return try TuyaCrypto.ecbDecrypt(ciphertext, key: key)
        } catch {
            // Some firmware answers refusals in clear text ("json obj data unvalid").
            if ciphertext.allSatisfy({ (0x20..<0x7F).contains($0) }) { return Array(ciphertext) }
            throw error
        }
    }

    /// Devices may send `"3.x"` and 12 bytes that are not all zero: 15 bytes either way.
    private func stripHeader(_ payload: [UInt8]) -> [UInt8] {
        payload.starts(with: version.bytes) && payload.count >= 15 ? Array(payload.dropFirst(15)) : payload
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func randomIV() -> [UInt8] { TuyaCrypto.randomBytes(12) }
}

/// Splits a TCP stream into ``TuyaMessage``s with a codec whose key the owner changes after the
/// session negotiation (``codec``).
public struct TuyaMessageDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = TuyaMessage

    public var codec: TuyaCodec

    public init(codec: TuyaCodec) { self.codec = codec }

    public mutating func decode(buffer: inout ByteBuffer) throws -> TuyaMessage? { try codec.decode(&buffer) }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> TuyaMessage? { try decode(buffer: &buffer) }
}

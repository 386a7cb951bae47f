public import TetherCore

/// protocomm's `Status` (`constants.proto`).
public enum ESPStatus: UInt64, Sendable, Hashable {
    case success = 0
    case invalidSecScheme = 1
    case invalidProto = 2
    case tooManySessions = 3
    case invalidArgument = 4
    case internalError = 5
    case cryptoError = 6
    case invalidSession = 7
    /// A value this code does not know.
    case unknown = 255

    init(wire: UInt64) { self = ESPStatus(rawValue: wire) ?? .unknown }
}

/// One `prov-session` message (`session.proto`, `sec0.proto`, `sec1.proto`, `sec2.proto`), both
/// directions, as a value with a pure codec.
public enum ESPSessionMessage: Sendable, Hashable {
    case sec0Command
    case sec0Response(status: ESPStatus)
    case sec1Command0(clientPublicKey: [UInt8])
    case sec1Response0(status: ESPStatus, devicePublicKey: [UInt8], deviceRandom: [UInt8])
    case sec1Command1(clientVerifyData: [UInt8])
    case sec1Response1(status: ESPStatus, deviceVerifyData: [UInt8])
    case sec2Command0(username: [UInt8], clientPublicKey: [UInt8])
    case sec2Response0(status: ESPStatus, devicePublicKey: [UInt8], salt: [UInt8])
    case sec2Command1(clientProof: [UInt8])
    case sec2Response1(status: ESPStatus, deviceProof: [UInt8], deviceNonce: [UInt8])

    /// The security scheme (0, 1 or 2) the message belongs to.
    public var securityVersion: Int {
        switch self {
        case .sec0Command, .sec0Response: 0
        case .sec1Command0, .sec1Response0, .sec1Command1, .sec1Response1: 1
        case .sec2Command0, .sec2Response0, .sec2Command1, .sec2Response1: 2
        }
    }

    public func encoded() -> [UInt8] {
        var inner = ProtobufWriter()
        var payload = ProtobufWriter()
        switch self {
        case .sec0Command:
            payload.lengthDelimited(20, [], always: true)
        case .sec0Response(let status):
            payload.varint(1, 1)
            inner.varint(1, status.rawValue)
            payload.lengthDelimited(21, inner.bytes, always: true)
        case .sec1Command0(let key):
            inner.lengthDelimited(1, key)
            payload.lengthDelimited(20, inner.bytes, always: true)
        case .sec1Response0(let status, let key, let random):
            payload.varint(1, 1)
            inner.varint(1, status.rawValue)
            inner.lengthDelimited(2, key)
            inner.lengthDelimited(3, random)
            payload.lengthDelimited(21, inner.bytes, always: true)
        case .sec1Command1(let verify):
            payload.varint(1, 2)
            inner.lengthDelimited(2, verify)
            payload.lengthDelimited(22, inner.bytes, always: true)
        case .sec1Response1(let status, let verify):
            payload.varint(1, 3)
            inner.varint(1, status.rawValue)
            inner.lengthDelimited(3, verify)
            payload.lengthDelimited(23, inner.bytes, always: true)
        case .sec2Command0(let username, let key):
            inner.lengthDelimited(1, username)
            inner.lengthDelimited(2, key)
            payload.lengthDelimited(20, inner.bytes, always: true)
        case .sec2Response0(let status, let key, let salt):
            payload.varint(1, 1)
            inner.varint(1, status.rawValue)
            inner.lengthDelimited(2, key)
            inner.lengthDelimited(3, salt)
            payload.lengthDelimited(21, inner.bytes, always: true)
        case .sec2Command1(let proof):
            payload.varint(1, 2)
            inner.lengthDelimited(1, proof)
            payload.lengthDelimited(22, inner.bytes, always: true)
        case .sec2Response1(let status, let proof, let nonce):
            payload.varint(1, 3)
            inner.varint(1, status.rawValue)
            inner.lengthDelimited(2, proof)
            inner.lengthDelimited(3, nonce)
            payload.lengthDelimited(23, inner.bytes, always: true)
        }
        var session = ProtobufWriter()
        session.varint(2, UInt64(securityVersion))
        session.lengthDelimited(10 + securityVersion, payload.bytes, always: true)
        return session.bytes
    }

    /// Reads a `SessionData`. Throws `TetherError.Code.malformedFrame` for bytes that are not
    /// one, or one whose message type and content disagree.
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        let session = try ProtobufFields(bytes)
        let version = session.varint(2)
        guard version <= 2, let payloadBytes = session.bytes(10 + Int(version)) else {
            throw TetherError(.malformedFrame, "a SessionData without the payload of its security version \(version)")
        }
        let payload = try ProtobufFields(payloadBytes)
        let type = payload.varint(1)
        func inner(_ field: Int) throws(TetherError) -> ProtobufFields {
            guard let bytes = payload.bytes(field) else { throw TetherError(.malformedFrame, "a sec\(version) message \(type) without its body") }
            return try ProtobufFields(bytes)
        }
        switch (version, type) {
        case (0, 0): self = .sec0Command
        case (0, 1): self = .sec0Response(status: ESPStatus(wire: try inner(21).varint(1)))
        case (1, 0): self = .sec1Command0(clientPublicKey: try inner(20).bytes(1) ?? [])
        case (1, 1):
            let body = try inner(21)
            self = .sec1Response0(status: ESPStatus(wire: body.varint(1)), devicePublicKey: body.bytes(2) ?? [], deviceRandom: body.bytes(3) ?? [])
        case (1, 2): self = .sec1Command1(clientVerifyData: try inner(22).bytes(2) ?? [])
        case (1, 3):
            let body = try inner(23)
            self = .sec1Response1(status: ESPStatus(wire: body.varint(1)), deviceVerifyData: body.bytes(3) ?? [])
        case (2, 0):
            let body = try inner(20)
            self = .sec2Command0(username: body.bytes(1) ?? [], clientPublicKey: body.bytes(2) ?? [])
        case (2, 1):
            let body = try inner(21)
            self = .sec2Response0(status: ESPStatus(wire: body.varint(1)), devicePublicKey: body.bytes(2) ?? [], salt: body.bytes(3) ?? [])
        case (2, 2): self = .sec2Command1(clientProof: try inner(22).bytes(1) ?? [])
        case (2, 3):
            let body = try inner(23)
            self = .sec2Response1(status: ESPStatus(wire: body.varint(1)), deviceProof: body.bytes(2) ?? [], deviceNonce: body.bytes(3) ?? [])
        default:
            throw TetherError(.malformedFrame, "sec\(version) message type \(type)")
        }
    }
}

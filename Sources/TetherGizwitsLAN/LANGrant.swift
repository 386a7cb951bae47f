public import Crypto
public import TetherCore

/// A capability the cloud signs for one user on one device, which the device checks offline:
/// Tether's extension of the GAgent login (README, "LAN grants").
///
/// A passcode is a shared secret that never changes, so anyone who once learned it (a guest
/// whose sharing was revoked) could log in on the LAN forever. A grant names the user, the
/// device, the rights and an expiry, and is signed with the cloud's Ed25519 key; a device that
/// holds the cloud's public key (it receives it when it activates) verifies it without the
/// internet. Revoking a user on the cloud stops new grants; the last one lapses at its expiry.
///
/// On the wire the grant travels in the login's passcode field (`0x0008`), as text:
/// `tg1.` + Base64(payload) + `.` + Base64(Ed25519 signature of the payload's bytes), the payload
/// a JSON object `{"v":1,"kid":…,"did":…,"uid":…,"rights":["read","control"],"iat":…,"exp":…}`
/// (times in Unix seconds). A GAgent module without the extension compares it with its passcode
/// and refuses it, so a client falls back to the passcode.
public struct LANGrant: Hashable, Sendable {
    /// What the holder may do on the LAN.
    public struct Rights: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Read the status and receive reports.
        public static let read = Rights(rawValue: 1)
        /// Write data points and send transparent data.
        public static let control = Rights(rawValue: 2)

        static let names: [(Rights, String)] = [(.read, "read"), (.control, "control")]
    }

    /// The text every grant starts with: the format's version.
    public static let prefix = "tg1."
    /// The longest grant text a device reads.
    public static let maximumLength = 1024

    /// Which of the cloud's keys signed it (``LANGrantKey/keyID``).
    public var keyID: String
    public var did: String
    public var uid: String
    public var rights: Rights
    /// Unix seconds.
    public var issuedAt: Int64
    /// Unix seconds; the grant is void from this second on.
    public var expiresAt: Int64

    public init(keyID: String, did: String, uid: String, rights: Rights, issuedAt: Int64, expiresAt: Int64) {
        self.keyID = keyID
        self.did = did
        self.uid = uid
        self.rights = rights
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    /// Whether a login text is a grant rather than a passcode.
    public static func isGrant(_ text: String) -> Bool { text.utf8.starts(with: prefix.utf8) }

    /// The payload's bytes, the part the signature covers.
    public var payload: [UInt8] {
        var object = JSONObject()
        object["v"] = .int(1)
        object["kid"] = .string(keyID)
        object["did"] = .string(did)
        object["uid"] = .string(uid)
        object["rights"] = .array(Rights.names.filter { rights.contains($0.0) }.map { .string($0.1) })
        object["iat"] = .int(issuedAt)
        object["exp"] = .int(expiresAt)
        return JSONValue.object(object).serializedBytes()
    }

    /// The grant as a device reads it, signed with `key`.
    public func signed(with key: Curve25519.Signing.PrivateKey) throws(TetherError) -> String {
        let payload = self.payload
        let signature: [UInt8]
        do {
            signature = Array(try key.signature(for: payload))
        } catch {
            throw TetherError(.invalidArgument, "the grant cannot be signed: \(error)")
        }
        return Self.prefix + payload.tetherBase64 + "." + signature.tetherBase64
    }

    /// Reads a grant's text without checking its signature (see ``LANGrantVerifier``): the
    /// grant, the bytes the signature covers and the signature. Nil for anything that is not a
    /// well-formed grant.
    public static func parse(_ text: String) -> (grant: LANGrant, payload: [UInt8], signature: [UInt8])? {
        guard text.utf8.count <= maximumLength, isGrant(text) else { return nil }
        let parts = text.utf8.dropFirst(prefix.utf8.count).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = [UInt8](tetherBase64: String(decoding: parts[0], as: UTF8.self)),
            let signature = [UInt8](tetherBase64: String(decoding: parts[1], as: UTF8.self)), signature.count == 64,
            let document = try? JSONValue.parse(payload), document["v"] == .int(1),
            let keyID = document["kid"]?.stringValue, let did = document["did"]?.stringValue, let uid = document["uid"]?.stringValue,
            case .int(let issuedAt)? = document["iat"], case .int(let expiresAt)? = document["exp"], let names = document["rights"]?.arrayValue
        else { return nil }
        // Rights this device does not know (a later cloud's) grant nothing here.
        var rights: Rights = []
        for name in names {
            if let known = Rights.names.first(where: { .string($0.1) == name }) { rights.insert(known.0) }
        }
        return (LANGrant(keyID: keyID, did: did, uid: uid, rights: rights, issuedAt: issuedAt, expiresAt: expiresAt), payload, signature)
    }
}

/// One of the cloud's grant keys, as a device receives it: the public half and its id.
public struct LANGrantKey: Hashable, Sendable {
    public var publicKey: Curve25519.Signing.PublicKey
    /// 16 lower-case hex digits: the start of the SHA-256 of the raw public key.
    public var keyID: String

    public init(_ publicKey: Curve25519.Signing.PublicKey) {
        self.publicKey = publicKey
        self.keyID = Array(SHA256.hash(data: publicKey.rawRepresentation).prefix(8)).tetherHex
    }

    /// The raw 32-byte key as Base64 (how the cloud hands it out); nil for anything else.
    public init?(base64 text: String) {
        guard let raw = [UInt8](tetherBase64: text), raw.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
            return nil
        }
        self.init(key)
    }

    public var base64: String { Array(publicKey.rawRepresentation).tetherBase64 }

    public static func == (lhs: LANGrantKey, rhs: LANGrantKey) -> Bool { lhs.keyID == rhs.keyID }
    public func hash(into hasher: inout Hasher) { hasher.combine(keyID) }
}

/// Why a device refused a grant.
public enum LANGrantRefusal: Error, Hashable, Sendable {
    /// Not a grant: unreadable, or signed by no key the device trusts (forged).
    case invalid
    /// Signed for another device.
    case foreign
    /// Its expiry has passed (or it was issued in the device's future: a clock too far apart).
    case expired
}

/// What a device checks a grant against: the cloud's keys it trusts and its own did.
public struct LANGrantVerifier: Sendable {
    public var keys: [LANGrantKey]
    /// How far the issuing time may lie ahead of the device's clock.
    public var allowedClockSkew: Int64

    public init(keys: [LANGrantKey], allowedClockSkew: Int64 = 300) {
        self.keys = keys
        self.allowedClockSkew = allowedClockSkew
    }

    /// The grant when it is signed by a trusted key, for `did`, and valid at `now` (Unix seconds).
    public func verify(_ text: String, did: String, now: Int64) -> Result<LANGrant, LANGrantRefusal> {
        guard let (grant, payload, signature) = LANGrant.parse(text), let key = keys.first(where: { $0.keyID == grant.keyID }),
            key.publicKey.isValidSignature(signature, for: payload)
        else { return .failure(.invalid) }
        guard grant.did.utf8.elementsEqual(did.utf8) else { return .failure(.foreign) }
        guard now < grant.expiresAt, grant.issuedAt <= now + allowedClockSkew else { return .failure(.expired) }
        return .success(grant)
    }
}

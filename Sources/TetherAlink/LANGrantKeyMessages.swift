public import TetherCore

extension AlinkTopic {
    /// `thing/lan/grant_key/get` (up) and its `_reply` (Tether extension): the cloud's public
    /// keys that sign LAN grants, which a device asks for when it connects and keeps.
    public static let lanGrantKeyGet = AlinkTopic.system("thing/lan/grant_key/get")
}

/// The reply data of ``AlinkTopic/lanGrantKeyGet``: the keys a device trusts for LAN grants,
/// newest first, `{"keys":[{"kid":…,"alg":"Ed25519","key":Base64 of the raw 32 bytes}]}`.
public struct LANGrantKeySet: Sendable, Hashable {
    public struct Key: Sendable, Hashable {
        public var keyID: String
        /// Base64 of the raw 32-byte Ed25519 public key.
        public var publicKey: String

        public init(keyID: String, publicKey: String) {
            self.keyID = keyID
            self.publicKey = publicKey
        }
    }

    public static let method = "thing.lan.grant_key.get"
    /// A device reads at most this many keys.
    public static let maximumKeys = 8

    public var keys: [Key]

    public init(keys: [Key]) { self.keys = keys }

    /// Reads the reply's `data`; keys of another algorithm are skipped (a later cloud may add them).
    public init(data: JSONValue) throws(TetherError) {
        guard let items = data["keys"]?.arrayValue, items.count <= Self.maximumKeys else {
            throw TetherError(.malformedPayload, "the grant keys' \"keys\" is an array of at most \(Self.maximumKeys) objects")
        }
        var keys: [Key] = []
        for item in items {
            guard let algorithm = item["alg"]?.stringValue, let keyID = item["kid"]?.stringValue, let key = item["key"]?.stringValue else {
                throw TetherError(.malformedPayload, "each grant key has \"kid\", \"alg\" and \"key\" strings")
            }
            if algorithm == "Ed25519" { keys.append(Key(keyID: keyID, publicKey: key)) }
        }
        self.keys = keys
    }

    public var data: JSONValue {
        ["keys": .array(keys.map { ["kid": .string($0.keyID), "alg": "Ed25519", "key": .string($0.publicKey)] })]
    }
}

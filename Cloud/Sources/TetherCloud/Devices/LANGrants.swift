import Crypto
import Foundation
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherGizwitsLAN

/// LAN grants (README, "LAN grants"): the deployment's Ed25519 key signs, for a user bound to a
/// device, a short-lived capability the device checks offline at the GAgent login; devices
/// receive the public key when they connect (`thing/lan/grant_key/get`). The key is made once,
/// in the database, so that every node signs with the same one.
public struct LANGrants: Sendable {
    let database: any SQLDatabase
    let lifetime: Int64

    static let keySetting = "lan_grant_key"
    public static let defaultLifetime: Int64 = 3600
    public static let lifetimeRange: ClosedRange<Int64> = 60...(7 * 24 * 3600)

    init(database: any SQLDatabase, lifetime: Int64 = Self.defaultLifetime) {
        self.database = database
        self.lifetime = lifetime
    }

    /// A grant for `user` on `did`, valid for the configured lifetime or until the user's
    /// binding ends, whichever comes first: `9017` when the user is not bound, `9023` when the
    /// device is disabled.
    func issue(for user: AuthenticatedUser, did: String, now: Int64 = Clock.unixMilliseconds() / 1000) async throws -> LANGrantBody {
        _ = try await DeviceAccess(database: database).controllable(by: user, did: did)
        var expiresAt = now + lifetime
        if let bindingEnds = try await BindingStore(database).bindingExpiry(user.uid, did: did) { expiresAt = min(expiresAt, bindingEnds) }
        let key = try await signingKey()
        let grant = LANGrant(keyID: LANGrantKey(key.publicKey).keyID, did: did, uid: user.uid, rights: [.read, .control], issuedAt: now, expiresAt: expiresAt)
        return LANGrantBody(grant: try grant.signed(with: key), keyID: grant.keyID, expiresAt: expiresAt)
    }

    /// What a device asks for when it connects: the public half of the deployment's key.
    func keys() async throws -> LANGrantKeySet {
        let key = LANGrantKey(try await signingKey().publicKey)
        return LANGrantKeySet(keys: [.init(keyID: key.keyID, publicKey: key.base64)])
    }

    /// Answers a device's `thing/lan/grant_key/get`.
    func answer(_ request: AlinkRequest) async throws -> AlinkReply {
        request.reply(data: try await keys().data)
    }

    /// The deployment's key: the first node to need it makes it; the others read that one.
    private func signingKey() async throws -> Curve25519.Signing.PrivateKey {
        let store = SettingStore(database)
        if let stored = try await store.value(Self.keySetting) { return try Self.key(stored) }
        try await store.insertIfAbsent(Self.keySetting, Array(Curve25519.Signing.PrivateKey().rawRepresentation).tetherBase64)
        guard let stored = try await store.value(Self.keySetting) else { throw StorageError(.unexpectedValue, "the LAN grant key was not stored") }
        return try Self.key(stored)
    }

    private static func key(_ stored: String) throws -> Curve25519.Signing.PrivateKey {
        guard let raw = [UInt8](tetherBase64: stored), let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
            throw StorageError(.unexpectedValue, "the stored LAN grant key is not an Ed25519 key")
        }
        return key
    }
}

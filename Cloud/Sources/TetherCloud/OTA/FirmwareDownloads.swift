import Crypto
import Foundation
import TetherCore

/// Signed, expiring download URLs for firmware packages:
/// `{public URL}/ota/firmware/{id}?expires={unix}&signature={hex}`, where the signature is the
/// HMAC-SHA256 of `{id}\n{expires}` under the deployment's key (made once, in the database, so
/// that every node signs and checks alike). Whoever holds the URL may download until it expires;
/// nothing else is needed, as devices have no session.
struct FirmwareDownloads: Sendable {
    let database: any SQLDatabase

    static let keySetting = "ota_url_key"
    /// The longest a URL may be valid.
    static let maximumLifetime: Int64 = 7 * 24 * 3600

    /// The URL's query for package `id`, valid until `expires` (Unix seconds).
    func query(id: Int64, expires: Int64) async throws -> String {
        "expires=\(expires)&signature=\(Self.signature(id: id, expires: expires, key: try await key()))"
    }

    /// Whether a request's `expires` and `signature` let it download package `id` at `now`.
    func verify(id: Int64, expires: Int64, signature: String, now: Int64) async throws -> Bool {
        guard expires >= now else { return false }
        return Secrets.constantTimeEquals(signature, Self.signature(id: id, expires: expires, key: try await key()))
    }

    static func signature(id: Int64, expires: Int64, key: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("\(id)\n\(expires)".utf8), using: SymmetricKey(data: Data(key.utf8)))
        return Secrets.lowercaseHex(code)
    }

    /// The deployment's key: the first node to need it makes it; the others read that one.
    private func key() async throws -> String {
        let store = SettingStore(database)
        if let key = try await store.value(Self.keySetting) { return key }
        try await store.insertIfAbsent(Self.keySetting, Secrets.hex(bytes: 32))
        guard let key = try await store.value(Self.keySetting) else { throw StorageError(.unexpectedValue, "the download URL key was not stored") }
        return key
    }
}

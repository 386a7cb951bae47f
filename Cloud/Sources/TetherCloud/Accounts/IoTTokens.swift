import TetherCloudProtocol
import TetherCore

/// IoT tokens (the channel SDK's `iotToken`): a logged-in app asks for one and hands it to a
/// device of its own, which presents it on `/sys/{pk}/{dn}/account/bind` to be bound to the
/// user. A token is random (128 bits), stored as its SHA-256, short-lived, single-use, and
/// only as good as the session that issued it: a logout, a revoked session or a disabled
/// account voids it.
struct IoTTokens: Sendable {
    let database: any SQLDatabase

    /// A new token for the user's session, valid `lifetime` seconds.
    func issue(for user: AuthenticatedUser, lifetime: Int64) async throws -> IoTTokenBody {
        let token = Secrets.hex(bytes: 16)
        let now = Clock.unixNow()
        // Never past the session's own end.
        let expireAt = min(now + lifetime, user.expiresAt)
        try await IoTTokenStore(database).insert(
            tokenHash: Secrets.sha256(token), issuer: .init(uid: user.uid, appID: user.appID, sessionHash: user.tokenHash), expiresAt: expireAt, now: now)
        return IoTTokenBody(token: token, expireAt: expireAt)
    }

    /// The user a token stands for, using it up; nil for a token that is unknown, used,
    /// expired, or whose session has ended.
    func redeem(_ token: String) async throws -> AuthenticatedUser? {
        guard !token.isEmpty, token.utf8.count <= 128 else { return nil }
        let now = Clock.unixNow()
        guard let issuer = try await IoTTokenStore(database).redeem(tokenHash: Secrets.sha256(token), now: now) else { return nil }
        guard let sessionEnds = try await TokenStore(database).expiry(tokenHash: issuer.sessionHash), sessionEnds > now else { return nil }
        return AuthenticatedUser(uid: issuer.uid, appID: issuer.appID, tokenHash: issuer.sessionHash, expiresAt: sessionEnds)
    }
}

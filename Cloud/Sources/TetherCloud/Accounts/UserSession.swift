import TetherCloudProtocol
import TetherCore

/// What a registration or login answers: `{uid, token, expire_at}`.
public struct UserSession: Sendable, Equatable {
    public var uid: String
    public var token: String
    public var expireAt: Int64

    var json: JSONValue { SessionBody(uid: uid, token: token, expireAt: expireAt).json }
}

/// The caller of an endpoint that needs a user token.
public struct AuthenticatedUser: Sendable, Equatable {
    public var uid: String
    public var appID: String
    /// The SHA-256 of the token it came with: what logout, refresh and re-checks act on.
    var tokenHash: String
    /// When that token ends (Unix seconds).
    var expiresAt: Int64
}

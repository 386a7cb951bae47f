import TetherCloudProtocol
import TetherCore

/// Users' sessions: the tokens that log them in, what checks them, and everything that ends
/// them. Every revocation is announced on the cluster bus (``ClusterEvent/credentialsChanged(uid:)``),
/// so that each node re-checks the live WebSocket sessions of that user at once.
extension AccountService {
    /// Issues a token; a disabled account gets none (9026).
    func issueToken(uid: String, appID: String, on executor: any SQLExecutor, client: SessionClient = SessionClient()) async throws -> UserSession {
        let token = Secrets.hex(bytes: 16)
        let now = Clock.unixNow()
        let expireAt = now + policy.tokenLifetime
        let inserted = try await TokenStore(executor).insert(
            tokenHash: Secrets.sha256(token), uid: uid, appID: appID, expiresAt: expireAt, now: now,
            source: client.source.key, userAgent: String(client.userAgent.prefix(200))
        )
        guard inserted else { throw CloudAPIError.userInvalid(detail: "this account is disabled") }
        return UserSession(uid: uid, token: token, expireAt: expireAt)
    }

    /// The user whose token `X-Gizwits-User-token` carries: 9004 for an unknown or revoked token
    /// (or one of another app, or of a disabled account), 9006 for an expired one.
    public func authenticate(appID: String, token: String?) async throws -> AuthenticatedUser {
        guard let token, !token.isEmpty else { throw CloudAPIError.tokenInvalid(detail: "X-Gizwits-User-token is required") }
        let hash = Secrets.sha256(token)
        let tokens = TokenStore(database)
        guard let found = try await tokens.find(tokenHash: hash, appID: appID) else {
            throw CloudAPIError.tokenInvalid()
        }
        let now = Clock.unixNow()
        guard found.expiresAt > now else { throw CloudAPIError.tokenExpired() }
        // Written at most once a minute per session: a list of sessions needs no more.
        if found.lastUsedAt < now - 60 {
            try await tokens.touch(tokenHash: hash, at: now)
        }
        return AuthenticatedUser(uid: found.uid, appID: appID, tokenHash: hash, expiresAt: found.expiresAt)
    }

    /// Whether a session authenticated earlier still stands, and until when: nil once its token
    /// was revoked or its account disabled.
    func currentExpiry(of user: AuthenticatedUser) async throws -> Int64? {
        try await TokenStore(database).expiry(tokenHash: user.tokenHash)
    }

    /// `POST /app/token/refresh`: a new token; the one it replaces ends after the policy's
    /// `refreshGrace`, and cannot be renewed again (a token in its grace would otherwise mint
    /// new ones for as long as anyone kept it).
    func refresh(_ user: AuthenticatedUser, client: SessionClient) async throws -> UserSession {
        let session = try await database.transaction { transaction in
            let replaced = try await TokenStore(transaction).replace(tokenHash: user.tokenHash, graceUntil: Clock.unixNow() + policy.refreshGrace)
            guard replaced else { throw CloudAPIError.tokenInvalid(detail: "this token was renewed already; use the new one") }
            return try await issueToken(uid: user.uid, appID: user.appID, on: transaction, client: client)
        }
        await announce(uid: user.uid)
        return session
    }

    /// `POST /app/iot_token`: a single-use token for the user's device's `account/bind`.
    func issueIoTToken(_ user: AuthenticatedUser) async throws -> IoTTokenBody {
        try await IoTTokens(database: database).issue(for: user, lifetime: policy.iotTokenLifetime)
    }

    /// `POST /app/logout`: ends the caller's session.
    func logout(_ user: AuthenticatedUser) async throws {
        try await TokenStore(database).delete(tokenHash: user.tokenHash)
        await announce(uid: user.uid)
    }

    /// One of a user's sessions, as `GET /app/sessions` lists it: the stored session, named by
    /// the first 16 hex digits of its token's SHA-256 (which reveal nothing of the token).
    struct SessionInfo: Sendable {
        var session: TokenStore.Session
        var isCurrent: Bool

        var id: String { AccountService.sessionID(tokenHash: session.tokenHash) }

        var json: JSONValue {
            [
                "id": .string(id), "appid": .string(session.appID), "created_at": .int(session.createdAt),
                "expire_at": .int(session.expiresAt), "last_used_at": .int(session.lastUsedAt), "source": .string(session.source),
                "user_agent": .string(session.userAgent), "current": .bool(isCurrent),
            ]
        }
    }

    static func sessionID(tokenHash: String) -> String { String(tokenHash.prefix(16)) }

    /// `GET /app/sessions`: the user's sessions that have not expired, newest first.
    func sessions(_ user: AuthenticatedUser) async throws -> [SessionInfo] {
        try await TokenStore(database).live(uid: user.uid, now: Clock.unixNow()).map { session in
            SessionInfo(session: session, isCurrent: session.tokenHash == user.tokenHash)
        }
    }

    /// `DELETE /app/sessions/{id}`: ends one of the user's sessions (9999 when there is none).
    func revokeSession(_ user: AuthenticatedUser, id: String) async throws {
        guard id.count == 16, id.allSatisfy(\.isHexDigit) else { throw CloudAPIError.formInvalid(detail: "a session id is 16 hex digits") }
        let deleted = try await TokenStore(database).delete(uid: user.uid, sessionID: id.lowercased())
        guard deleted else { throw CloudAPIError.notFound(detail: "no session \(id)") }
        await announce(uid: user.uid)
    }

    /// Ends every session of a user (on a password change or reset); the caller announces it
    /// once the transaction has committed.
    func revokeTokens(uid: String, on executor: any SQLExecutor) async throws {
        try await TokenStore(executor).deleteAll(uid: uid)
    }

    /// Tells every node that `uid`'s credentials changed: live sessions re-check their token.
    func announce(uid: String) async {
        await bus?.publish(.credentialsChanged(uid: uid))
    }
}

/// Where a session was opened from, shown in the list of sessions.
public struct SessionClient: Sendable {
    var source: ClientSource
    var userAgent: String

    init(source: ClientSource = ClientSource(key: ""), userAgent: String? = nil) {
        self.source = source
        self.userAgent = userAgent ?? ""
    }
}

import TetherCore

/// The `user_tokens` and `app_tokens` tables: users' sessions and the apps' SMS tokens, by the
/// SHA-256 of the token (a token itself is never stored).
struct TokenStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// A session token of an enabled account, as ``find(tokenHash:appID:)`` reads it.
    struct Found: Sendable {
        var uid: String
        var expiresAt: Int64
        var lastUsedAt: Int64
    }

    /// One live session, as the list of sessions shows it.
    struct Session: Sendable {
        var tokenHash: String
        var appID: String
        var createdAt: Int64
        var expiresAt: Int64
        var lastUsedAt: Int64
        var source: String
        var userAgent: String
    }

    /// Stores a session for `uid` when the account exists and is enabled; false otherwise.
    func insert(
        tokenHash: String, uid: String, appID: String, expiresAt: Int64, now: Int64, source: String, userAgent: String
    ) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            INSERT INTO user_tokens (token_hash, uid, app_id, expires_at, created_at, source, user_agent, last_used_at)
            SELECT $1, uid, $3, $4, $5, $6, $7, $5 FROM users WHERE uid = $2 AND is_disabled = 0
            RETURNING uid
            """,
            .text(tokenHash), .text(uid), .text(appID), .int(expiresAt), .int(now), .text(source), .text(userAgent)
        ) != nil
    }

    /// The session of an enabled account that `tokenHash` names in `appID`.
    func find(tokenHash: String, appID: String) async throws(StorageError) -> Found? {
        guard
            let row = try await executor.first(
                """
                SELECT t.uid, t.expires_at, t.last_used_at FROM user_tokens t JOIN users u ON u.uid = t.uid
                WHERE t.token_hash = $1 AND t.app_id = $2 AND u.is_disabled = 0
                """,
                .text(tokenHash), .text(appID)
            )
        else { return nil }
        return Found(uid: try row.text("uid"), expiresAt: try row.int("expires_at"), lastUsedAt: try row.int("last_used_at"))
    }

    func touch(tokenHash: String, at now: Int64) async throws(StorageError) {
        try await executor.query("UPDATE user_tokens SET last_used_at = $2 WHERE token_hash = $1", .text(tokenHash), .int(now))
    }

    /// Until when the session stands; nil once revoked or its account disabled.
    func expiry(tokenHash: String) async throws(StorageError) -> Int64? {
        try await executor.first(
            """
            SELECT t.expires_at FROM user_tokens t JOIN users u ON u.uid = t.uid
            WHERE t.token_hash = $1 AND u.is_disabled = 0
            """,
            .text(tokenHash)
        )?.int("expires_at")
    }

    /// Marks the session replaced, ending it by `graceUntil` at the latest; false when it was
    /// replaced already (or is gone).
    func replace(tokenHash: String, graceUntil: Int64) async throws(StorageError) -> Bool {
        !(try await executor.query(
            "UPDATE user_tokens SET expires_at = CASE WHEN expires_at > $2 THEN $2 ELSE expires_at END, replaced = 1 WHERE token_hash = $1 AND replaced = 0 RETURNING uid",
            .text(tokenHash), .int(graceUntil)
        ).isEmpty)
    }

    func delete(tokenHash: String) async throws(StorageError) {
        try await executor.query("DELETE FROM user_tokens WHERE token_hash = $1", .text(tokenHash))
    }

    /// Ends one of `uid`'s sessions by the first 16 hex digits of its hash; false when none matched.
    func delete(uid: String, sessionID: String) async throws(StorageError) -> Bool {
        !(try await executor.query(
            "DELETE FROM user_tokens WHERE uid = $1 AND substr(token_hash, 1, 16) = $2 RETURNING uid", .text(uid), .text(sessionID)
        ).isEmpty)
    }

    func deleteAll(uid: String) async throws(StorageError) {
        try await executor.query("DELETE FROM user_tokens WHERE uid = $1", .text(uid))
    }

    /// `uid`'s sessions that have not expired at `now`, newest first.
    func live(uid: String, now: Int64) async throws(StorageError) -> [Session] {
        try await executor.query(
            """
            SELECT token_hash, app_id, created_at, expires_at, last_used_at, source, user_agent FROM user_tokens
            WHERE uid = $1 AND expires_at > $2 ORDER BY created_at DESC, token_hash
            """,
            .text(uid), .int(now)
        ).map { row throws(StorageError) in
            Session(
                tokenHash: try row.text("token_hash"), appID: try row.text("app_id"), createdAt: try row.int("created_at"),
                expiresAt: try row.int("expires_at"), lastUsedAt: try row.int("last_used_at"), source: try row.text("source"),
                userAgent: try row.text("user_agent")
            )
        }
    }

    /// Whether `uid` has a session opened from `source`.
    func hasSession(uid: String, source: String) async throws(StorageError) -> Bool {
        try await executor.first("SELECT 1 AS known FROM user_tokens WHERE uid = $1 AND source = $2 LIMIT 1", .text(uid), .text(source)) != nil
    }

    // MARK: App tokens

    func insertAppToken(tokenHash: String, appID: String, expiresAt: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO app_tokens (token_hash, app_id, expires_at) VALUES ($1, $2, $3)", .text(tokenHash), .text(appID), .int(expiresAt)
        )
    }

    /// Until when an app token of `appID` is valid; nil for an unknown one.
    func appTokenExpiry(tokenHash: String, appID: String) async throws(StorageError) -> Int64? {
        try await executor.first("SELECT expires_at FROM app_tokens WHERE token_hash = $1 AND app_id = $2", .text(tokenHash), .text(appID))?.int("expires_at")
    }
}

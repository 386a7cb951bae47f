import TetherCore

/// The `iot_tokens` table: single-use tokens a user's session issued for a device's
/// `account/bind`, by the SHA-256 of the token.
struct IoTTokenStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// Who issued a token, once it is redeemed.
    struct Issuer: Sendable {
        var uid: String
        var appID: String
        var sessionHash: String
    }

    /// Stores a token, and forgets the ones that ended.
    func insert(tokenHash: String, issuer: Issuer, expiresAt: Int64, now: Int64) async throws(StorageError) {
        try await executor.query("DELETE FROM iot_tokens WHERE expires_at <= $1", .int(now))
        try await executor.query(
            "INSERT INTO iot_tokens (token_hash, uid, app_id, session_hash, expires_at) VALUES ($1, $2, $3, $4, $5)",
            .text(tokenHash), .text(issuer.uid), .text(issuer.appID), .text(issuer.sessionHash), .int(expiresAt))
    }

    /// Marks an unused, unexpired token used and says who issued it; nil otherwise. One
    /// statement, so that two redemptions of one token cannot both succeed.
    func redeem(tokenHash: String, now: Int64) async throws(StorageError) -> Issuer? {
        try await executor.first(
            "UPDATE iot_tokens SET used = 1 WHERE token_hash = $1 AND used = 0 AND expires_at > $2 RETURNING uid, app_id, session_hash",
            .text(tokenHash), .int(now)
        ).map { row throws(StorageError) in
            Issuer(uid: try row.text("uid"), appID: try row.text("app_id"), sessionHash: try row.text("session_hash"))
        }
    }
}

import TetherCore

/// The `verification_codes` and `email_links` tables: SMS codes and the links of confirmation
/// and reset e-mails, by hash.
struct VerificationStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// The newest unused code of a number.
    struct Code: Sendable {
        var id: Int64
        var codeHash: String
        var expiresAt: Int64
        var attempts: Int64
    }

    /// When codes were sent to `phone` since `since`.
    func codeTimes(appID: String, phone: String, since: Int64) async throws(StorageError) -> [Int64] {
        try await executor.query(
            "SELECT created_at FROM verification_codes WHERE app_id = $1 AND phone = $2 AND created_at > $3",
            .text(appID), .text(phone), .int(since)
        ).map { row throws(StorageError) in try row.int("created_at") }
    }

    func insertCode(appID: String, phone: String, codeHash: String, expiresAt: Int64, now: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO verification_codes (app_id, phone, code_hash, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)",
            .text(appID), .text(phone), .text(codeHash), .int(expiresAt), .int(now)
        )
    }

    func newestUnusedCode(appID: String, phone: String) async throws(StorageError) -> Code? {
        guard
            let row = try await executor.first(
                """
                SELECT id, code_hash, expires_at, attempts FROM verification_codes
                WHERE app_id = $1 AND phone = $2 AND used = 0 ORDER BY id DESC LIMIT 1
                """,
                .text(appID), .text(phone)
            )
        else { return nil }
        return Code(id: try row.int("id"), codeHash: try row.text("code_hash"), expiresAt: try row.int("expires_at"), attempts: try row.int("attempts"))
    }

    /// Counts a wrong guess; `void` uses the code up.
    func recordWrongGuess(id: Int64, attempts: Int64, void: Bool) async throws(StorageError) {
        try await executor.query("UPDATE verification_codes SET attempts = $2, used = $3 WHERE id = $1", .int(id), .int(attempts), .bool(void))
    }

    func useCode(id: Int64) async throws(StorageError) {
        try await executor.query("UPDATE verification_codes SET used = 1 WHERE id = $1", .int(id))
    }

    func insertEmailLink(tokenHash: String, uid: String, purpose: String, expiresAt: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO email_links (token_hash, uid, purpose, expires_at) VALUES ($1, $2, $3, $4)",
            .text(tokenHash), .text(uid), .text(purpose), .int(expiresAt)
        )
    }

    /// Uses up a link that is neither used nor expired at `now`, and returns its user.
    func consumeEmailLink(tokenHash: String, purpose: String, now: Int64) async throws(StorageError) -> String? {
        try await executor.query(
            """
            UPDATE email_links SET used = 1
            WHERE token_hash = $1 AND purpose = $2 AND used = 0 AND expires_at > $3 RETURNING uid
            """,
            .text(tokenHash), .text(purpose), .int(now)
        ).first?.optionalText("uid")
    }
}

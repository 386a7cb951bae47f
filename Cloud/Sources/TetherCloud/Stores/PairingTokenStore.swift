import TetherCloudProtocol

/// The `pairing_tokens` table: tokens by the SHA-256 of their text, with their outcome.
struct PairingTokenStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// A token as stored.
    struct Record: Sendable {
        var id: String
        var uid: String
        var appID: String
        var sessionHash: String
        var productKey: String?
        var homeID: Int64?
        var expiresAt: Int64
        var usedAt: Int64?
        var did: String?
        var role: String?
        var placedHomeID: Int64?
        var errorCode: Int64?
        var message: String?

        /// How long an activation may take to settle before it counts as failed.
        static let settleSeconds: Int64 = 60

        func status(now: Int64, productKey devicePK: String? = nil, mac: String? = nil) -> PairingStatusBody {
            // Used but not settled yet: the activation is under way, still pending to the app; a
            // minute on, the node that took it died before settling it, and it is refused.
            let unsettledTooLong = usedAt.map { $0 < now - Self.settleSeconds } ?? false
            let state: PairingState =
                if usedAt == nil {
                    expiresAt > now ? .pending : .expired
                } else if role != nil {
                    .bound
                } else if errorCode != nil || unsettledTooLong {
                    .refused
                } else {
                    .pending
                }
            let lost = state == .refused && errorCode == nil
            return PairingStatusBody(
                id: id, state: state, did: did, productKey: devicePK ?? productKey, mac: mac, role: role, homeID: placedHomeID,
                errorCode: errorCode.map { Int(clamping: $0) } ?? (lost ? CloudError.serverError.code : nil),
                message: message ?? (lost ? "the activation did not complete" : nil), expireAt: expiresAt)
        }
    }

    private static let columns =
        "id, uid, app_id, session_hash, product_key, home_id, expires_at, used_at, did, role, placed_home_id, error_code, message"

    /// Pending tokens of the user, the user's row locked first (on PostgreSQL) so that two
    /// requests counting at once cannot both pass a limit: call on a transaction.
    func pendingCount(uid: String, now: Int64) async throws(StorageError) -> Int64 {
        try await UserStore(executor).lockForCounting(uid: uid)
        return try await executor.first(
            "SELECT COUNT(*) AS n FROM pairing_tokens WHERE uid = $1 AND used_at IS NULL AND expires_at > $2", .text(uid), .int(now))?.int("n") ?? 0
    }

    /// Stores a token, and forgets those that ended more than a day ago (their outcome was read by then).
    func insert(_ record: Record, tokenHash: String, now: Int64) async throws(StorageError) {
        try await executor.query("DELETE FROM pairing_tokens WHERE expires_at <= $1", .int(now - 86_400))
        try await executor.query(
            """
            INSERT INTO pairing_tokens (id, token_hash, uid, app_id, session_hash, product_key, home_id, expires_at, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """,
            .text(record.id), .text(tokenHash), .text(record.uid), .text(record.appID), .text(record.sessionHash),
            record.productKey.map(SQLValue.text) ?? .null, record.homeID.map(SQLValue.int) ?? .null, .int(record.expiresAt), .int(now))
    }

    /// Marks an unused, unexpired token used by `did` and returns it; nil when it is not (then
    /// ``find(tokenHash:)`` says why). One statement, so that two devices cannot both use it.
    func redeem(tokenHash: String, did: String, now: Int64) async throws(StorageError) -> Record? {
        try await executor.first(
            "UPDATE pairing_tokens SET used_at = $3, did = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $3 RETURNING \(Self.columns)",
            .text(tokenHash), .text(did), .int(now)
        ).map(Self.record)
    }

    func find(tokenHash: String) async throws(StorageError) -> Record? {
        try await executor.first("SELECT \(Self.columns) FROM pairing_tokens WHERE token_hash = $1", .text(tokenHash)).map(Self.record)
    }

    /// The user's token by its id (another user's is not found).
    func find(id: String, uid: String) async throws(StorageError) -> Record? {
        try await executor.first("SELECT \(Self.columns) FROM pairing_tokens WHERE id = $1 AND uid = $2", .text(id), .text(uid)).map(Self.record)
    }

    /// Ends the user's token now, if no device has used it.
    func cancel(id: String, uid: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            "UPDATE pairing_tokens SET expires_at = $3 WHERE id = $1 AND uid = $2 AND used_at IS NULL AND expires_at > $3", .text(id), .text(uid), .int(now))
    }

    /// Records the outcome of a redeemed token.
    func settle(id: String, role: String?, placedHomeID: Int64?, errorCode: Int?, message: String?) async throws(StorageError) {
        try await executor.query(
            "UPDATE pairing_tokens SET role = $2, placed_home_id = $3, error_code = $4, message = $5 WHERE id = $1",
            .text(id), role.map(SQLValue.text) ?? .null, placedHomeID.map(SQLValue.int) ?? .null, errorCode.map { SQLValue.int(Int64($0)) } ?? .null,
            message.map(SQLValue.text) ?? .null)
    }

    private static func record(_ row: SQLRow) throws(StorageError) -> Record {
        Record(
            id: try row.text("id"), uid: try row.text("uid"), appID: try row.text("app_id"), sessionHash: try row.text("session_hash"),
            productKey: row.optionalText("product_key"), homeID: row.optionalInt("home_id"), expiresAt: try row.int("expires_at"),
            usedAt: row.optionalInt("used_at"), did: row.optionalText("did"), role: row.optionalText("role"), placedHomeID: row.optionalInt("placed_home_id"),
            errorCode: row.optionalInt("error_code"), message: row.optionalText("message"))
    }
}

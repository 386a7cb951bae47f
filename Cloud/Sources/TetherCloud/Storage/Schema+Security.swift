extension Schema {
    /// What the security review asked for: rate-limit counters shared by every node, proof that
    /// a device's registration is newer than its last one, products that still accept GAgent's
    /// unsigned registration, accounts an operator locked, and what a user's sessions are.
    static func version3(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE rate_limits (
                key TEXT NOT NULL, window_start BIGINT NOT NULL, count BIGINT NOT NULL, expires_at BIGINT NOT NULL,
                PRIMARY KEY (key, window_start))
            """,
            "CREATE INDEX rate_limits_expiry ON rate_limits (expires_at)",
            "ALTER TABLE devices ADD COLUMN registered_ts BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE products ADD COLUMN unsigned_registration BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN is_disabled BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE user_tokens ADD COLUMN source TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE user_tokens ADD COLUMN user_agent TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE user_tokens ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE user_tokens ADD COLUMN replaced BIGINT NOT NULL DEFAULT 0",
        ]
    }
}

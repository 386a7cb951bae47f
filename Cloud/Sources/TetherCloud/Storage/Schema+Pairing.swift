extension Schema {
    /// Pairing tokens (Tether extension, Tuya's AP-mode token): issued to a user's session for a
    /// new device, presented once by the device when it first reaches the cloud. The token is
    /// kept as its SHA-256; `id` is public (the app follows the pairing by it). A row keeps its
    /// outcome: the device, and the refusal's code when it was refused.
    static func version15(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE pairing_tokens (
                id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
                app_id TEXT NOT NULL, session_hash TEXT NOT NULL, product_key TEXT, home_id BIGINT, expires_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL, used_at BIGINT, did TEXT, role TEXT, placed_home_id BIGINT, error_code BIGINT, message TEXT)
            """,
            "CREATE INDEX pairing_tokens_expiry ON pairing_tokens (expires_at)",
            "CREATE INDEX pairing_tokens_user ON pairing_tokens (uid)",
        ]
    }
}

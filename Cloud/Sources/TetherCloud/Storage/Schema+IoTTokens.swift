extension Schema {
    /// IoT tokens: what a logged-in app hands to a device of its own (the phone as an Alink
    /// device, `account/bind`) so that the device binds itself to the user.
    static func version4(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE iot_tokens (
                token_hash TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
                app_id TEXT NOT NULL, session_hash TEXT NOT NULL, expires_at BIGINT NOT NULL, used BIGINT NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX iot_tokens_expiry ON iot_tokens (expires_at)",
        ]
    }
}

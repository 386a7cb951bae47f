extension Schema {
    /// Sharing (`gizwits-openapi.md` §2.5): invitations to a user or by QR code (only the code's
    /// hash is kept), a binding's end for guests whose invitation limited their time, and the
    /// message centre (§2.2).
    static func version12(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE sharing_invitations (
                id \(serial), did TEXT NOT NULL REFERENCES devices(did) ON DELETE CASCADE, owner_uid TEXT NOT NULL, guest_uid TEXT,
                kind BIGINT NOT NULL, code_hash TEXT UNIQUE, status BIGINT NOT NULL, duration_minutes BIGINT,
                owner_alias TEXT NOT NULL DEFAULT '', guest_alias TEXT NOT NULL DEFAULT '',
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, expired_at BIGINT NOT NULL)
            """,
            "CREATE INDEX sharing_owner ON sharing_invitations (owner_uid, id)",
            "CREATE INDEX sharing_guest ON sharing_invitations (guest_uid, id)",
            "ALTER TABLE bindings ADD COLUMN expires_at BIGINT",
            """
            CREATE TABLE messages (
                id \(serial), uid TEXT NOT NULL, type BIGINT NOT NULL, status BIGINT NOT NULL DEFAULT 0, content TEXT NOT NULL,
                data TEXT NOT NULL DEFAULT '{}', created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX messages_uid ON messages (uid, id)",
            // What a user wants in the message centre about a device: alert, error, offline.
            "ALTER TABLE bindings ADD COLUMN notify TEXT NOT NULL DEFAULT ''",
        ]
    }
}

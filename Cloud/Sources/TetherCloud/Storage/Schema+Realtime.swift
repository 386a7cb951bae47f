extension Schema {
    /// The real-time side: where each device is connected, its latest status, its traffic and
    /// connectivity log, and the command ledger. Times are Unix milliseconds (`_ms`).
    static func version2(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            "ALTER TABLE devices ADD COLUMN online_node TEXT",
            "ALTER TABLE devices ADD COLUMN online_changed_ms BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE devices ADD COLUMN remote_address TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE devices ADD COLUMN activated_ms BIGINT NOT NULL DEFAULT 0",
            """
            CREATE TABLE device_status (
                did TEXT PRIMARY KEY REFERENCES devices(did) ON DELETE CASCADE,
                attrs TEXT NOT NULL, updated_ms BIGINT NOT NULL)
            """,
            """
            CREATE TABLE device_log (
                id \(serial), did TEXT NOT NULL REFERENCES devices(did) ON DELETE CASCADE,
                kind TEXT NOT NULL, at_ms BIGINT NOT NULL, ip TEXT NOT NULL DEFAULT '',
                body TEXT NOT NULL DEFAULT '', payload_hex TEXT NOT NULL DEFAULT '',
                uid TEXT, app_id TEXT, source TEXT)
            """,
            "CREATE INDEX device_log_did ON device_log (did, at_ms)",
            """
            CREATE TABLE commands (
                id \(serial), did TEXT NOT NULL REFERENCES devices(did) ON DELETE CASCADE,
                uid TEXT NOT NULL, app_id TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                state TEXT NOT NULL, code BIGINT, message TEXT NOT NULL DEFAULT '',
                created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, sent_ms BIGINT,
                queue_until_ms BIGINT)
            """,
            "CREATE INDEX commands_did_state ON commands (did, state, id)",
            "CREATE INDEX commands_state ON commands (state, id)",
            "CREATE TABLE cloud_nodes (node_id TEXT PRIMARY KEY, heartbeat_ms BIGINT NOT NULL)",
            "CREATE TABLE cluster_spill (id \(serial), body TEXT NOT NULL, created_ms BIGINT NOT NULL)",
        ]
    }
}

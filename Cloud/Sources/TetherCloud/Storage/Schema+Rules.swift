extension Schema {
    /// Linkage rules (reference §2.7), each a user's own, and the events that may set them off.
    /// A rule needs its owner's binding to the device that triggers it: it goes with the
    /// binding. `trigger_value` is the last value the rule saw of its alert or fault (for the
    /// 0→1 and 1→0 transitions); `last_fired_ms` keeps its `interval`; `revision` counts its
    /// replacements, so that nodes may keep rules read once.
    ///
    /// `rule_events` is an outbox: a device's report, event or presence change that some rule
    /// watches is written there with what the gateway stored (the report in the same
    /// transaction), and taken once, by one node, in the transaction that fires the rules it
    /// sets off.
    static func version19(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE rules (
                id TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE, app_id TEXT NOT NULL, did TEXT NOT NULL,
                event TEXT NOT NULL, body TEXT NOT NULL, revision BIGINT NOT NULL DEFAULT 0, interval_s BIGINT NOT NULL, last_fired_ms BIGINT,
                trigger_value BIGINT,
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
                FOREIGN KEY (uid, did) REFERENCES bindings (uid, did) ON DELETE CASCADE)
            """,
            "CREATE INDEX rules_device ON rules (did)",
            "CREATE INDEX rules_owner ON rules (uid)",
            """
            CREATE TABLE rule_events (
                id \(serial), did TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL, created_ms BIGINT NOT NULL)
            """,
        ]
    }
}

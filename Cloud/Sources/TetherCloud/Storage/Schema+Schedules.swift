extension Schema {
    /// Schedules (the Open API's per-device and common schedulers) and their run log. A schedule
    /// keeps its fields as the JSON apps read (`body`); `next_run_ms` is derived from them when
    /// the schedule is written or fired, so that due runs are found by an index. A device's
    /// schedule needs its owner's binding to the device: it goes with the binding (revoked,
    /// expired, unbound). A run is logged once per (schedule, planned instant), with the command
    /// it put in the ledger, whose `source` says who sent it.
    static func version16(_ dialect: SQLDialect) -> [String] {
        let serial = dialect == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        return [
            """
            CREATE TABLE schedules (
                id TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE, app_id TEXT NOT NULL,
                did TEXT, group_id TEXT, scene_id TEXT, product_key TEXT NOT NULL DEFAULT '', body TEXT NOT NULL,
                next_run_ms BIGINT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
                FOREIGN KEY (uid, did) REFERENCES bindings (uid, did) ON DELETE CASCADE)
            """,
            "CREATE INDEX schedules_due ON schedules (next_run_ms) WHERE next_run_ms IS NOT NULL",
            "CREATE INDEX schedules_owner ON schedules (uid, did)",
            """
            CREATE TABLE schedule_runs (
                id \(serial), schedule_id TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE, planned_ms BIGINT NOT NULL,
                fired_ms BIGINT, state TEXT NOT NULL, command_id BIGINT, error_code BIGINT, message TEXT NOT NULL DEFAULT '',
                UNIQUE (schedule_id, planned_ms))
            """,
            "ALTER TABLE commands ADD COLUMN source TEXT NOT NULL DEFAULT 'app'",
        ]
    }
}

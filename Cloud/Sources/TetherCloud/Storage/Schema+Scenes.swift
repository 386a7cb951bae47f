extension Schema {
    /// Scenes (reference §2.8), each a user's own, with their tasks as the JSON apps write; and
    /// the runs of automations (a scene's, a group's or a scene's schedule), kept durable so that
    /// a delay outlives a restart and each step is taken once by one node.
    ///
    /// A run has lanes, sequences of steps run side by side (a scene has one); a lane holds a
    /// snapshot of its steps, the next one to take and when (`resume_ms`, NULL once the lane is
    /// done), so that editing a scene does not change a run under way. Each step's outcome per
    /// device is kept in `automation_steps`, with the ledger entry it made.
    static func version18(_ dialect: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE scenes (
                id TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE, name TEXT NOT NULL,
                remark TEXT NOT NULL DEFAULT '', tasks TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX scenes_owner ON scenes (uid)",
            """
            CREATE TABLE automation_runs (
                id TEXT PRIMARY KEY, uid TEXT NOT NULL REFERENCES users(uid) ON DELETE CASCADE, app_id TEXT NOT NULL,
                scene_id TEXT REFERENCES scenes(id) ON DELETE CASCADE, source TEXT NOT NULL, started_ms BIGINT NOT NULL,
                finished_ms BIGINT, state TEXT NOT NULL)
            """,
            "CREATE INDEX automation_runs_scene ON automation_runs (scene_id, started_ms)",
            "CREATE INDEX automation_runs_owner ON automation_runs (uid, state)",
            """
            CREATE TABLE automation_lanes (
                run_id TEXT NOT NULL REFERENCES automation_runs(id) ON DELETE CASCADE, lane BIGINT NOT NULL, steps TEXT NOT NULL,
                next_step BIGINT NOT NULL DEFAULT 0, resume_ms BIGINT, stop_on_failure BIGINT NOT NULL, failed BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (run_id, lane))
            """,
            "CREATE INDEX automation_lanes_due ON automation_lanes (resume_ms) WHERE resume_ms IS NOT NULL",
            """
            CREATE TABLE automation_steps (
                run_id TEXT NOT NULL REFERENCES automation_runs(id) ON DELETE CASCADE, lane BIGINT NOT NULL, step BIGINT NOT NULL,
                did TEXT NOT NULL, at_ms BIGINT NOT NULL, command_id BIGINT, error_code BIGINT, message TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (run_id, lane, step, did))
            """,
            "ALTER TABLE schedule_runs ADD COLUMN run_id TEXT",
        ]
    }
}

import TetherCloudProtocol
import TetherCore

/// The `automation_runs`, `automation_lanes` and `automation_steps` tables.
struct AutomationRunStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    enum State: String, Sendable {
        case running, completed, failed
    }

    struct Run: Sendable, Equatable {
        var id: String
        var uid: String
        var appID: String
        var sceneID: String?
        var source: CommandSource
        var startedMs: Int64
        var finishedMs: Int64?
        var state: State
    }

    /// A lane whose next step is due, locked, with what its run says about who it acts for.
    struct Lane: Sendable {
        var run: Run
        var lane: Int64
        var steps: [SceneTaskBody]
        var nextStep: Int64
        var stopOnFailure: Bool
        var failed: Bool
    }

    enum Due: Sendable {
        case lane(Lane)
        /// A lane whose steps or run cannot be read (written by a newer version, or damaged).
        case unreadable(runID: String, lane: Int64)
    }

    private static func run(_ row: SQLRow) throws(StorageError) -> Run {
        guard let source = CommandSource(rawValue: try row.text("source")), let state = State(rawValue: try row.text("state")) else {
            throw StorageError.unexpectedValue(column: "source")
        }
        return Run(
            id: try row.text("id"), uid: try row.text("uid"), appID: try row.text("app_id"), sceneID: row.optionalText("scene_id"), source: source,
            startedMs: try row.int("started_ms"), finishedMs: row.optionalInt("finished_ms"), state: state)
    }

    /// Starts a run: each lane's steps from the first, due at `nowMs`.
    func insert(_ run: Run, lanes: [[SceneTaskBody]], stopOnFailure: Bool) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO automation_runs (id, uid, app_id, scene_id, source, started_ms, state) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            .text(run.id), .text(run.uid), .text(run.appID), run.sceneID.map(SQLValue.text) ?? .null, .text(run.source.rawValue), .int(run.startedMs),
            .text(run.state.rawValue))
        for (index, steps) in lanes.enumerated() {
            try await executor.query(
                "INSERT INTO automation_lanes (run_id, lane, steps, next_step, resume_ms, stop_on_failure) VALUES ($1, $2, $3, 0, $4, $5)",
                .text(run.id), .int(Int64(index)), .text(JSONValue.array(steps.map { $0.json(described: false) }).serialized()), .int(run.startedMs),
                .int(stopOnFailure ? 1 : 0))
        }
    }

    /// The user's runs under way.
    func runningCount(uid: String) async throws(StorageError) -> Int64 {
        try await executor.first("SELECT COUNT(*) AS n FROM automation_runs WHERE uid = $1 AND state = 'running'", .text(uid))?.int("n") ?? 0
    }

    /// Whether any lane is due by `nowMs`: a look without a transaction, the usual answer no.
    func anyDue(nowMs: Int64) async throws(StorageError) -> Bool {
        try await executor.first("SELECT 1 AS due FROM automation_lanes WHERE resume_ms IS NOT NULL AND resume_ms <= $1 LIMIT 1", .int(nowMs)) != nil
    }

    /// Locks lanes whose next step is due by `nowMs`, oldest first; on PostgreSQL skipping those
    /// another node holds. `runID` limits it to one run's lanes.
    func lockDue(nowMs: Int64, limit: Int, runID: String? = nil) async throws(StorageError) -> [Due] {
        // The run's row with its lanes: the node that takes a lane is the one that may end its run.
        let lock = executor.dialect == .postgres ? " FOR UPDATE OF l, r SKIP LOCKED" : ""
        var binds: [SQLValue] = [.int(nowMs), .int(Int64(limit))]
        var filter = ""
        if let runID {
            binds.append(.text(runID))
            filter = " AND l.run_id = $3"
        }
        let rows = try await executor.query(
            """
            SELECT l.run_id, l.lane, l.steps, l.next_step, l.stop_on_failure, l.failed, r.id, r.uid, r.app_id, r.scene_id, r.source,
                r.started_ms, r.finished_ms, r.state
            FROM automation_lanes l JOIN automation_runs r ON r.id = l.run_id
            WHERE l.resume_ms IS NOT NULL AND l.resume_ms <= $1\(filter) ORDER BY l.resume_ms, l.run_id, l.lane LIMIT $2\(lock)
            """, binds)
        return try rows.map { row throws(StorageError) in
            let runID = try row.text("run_id")
            let lane = try row.int("lane")
            guard let json = try? JSONValue.parse(try row.text("steps")), let items = json.arrayValue,
                let steps = try? items.map({ item throws(CloudBodyError) in try SceneTaskBody(json: item) }), let run = try? Self.run(row)
            else { return .unreadable(runID: runID, lane: lane) }
            return .lane(
                Lane(
                    run: run, lane: lane, steps: steps, nextStep: try row.int("next_step"), stopOnFailure: try row.bool("stop_on_failure"),
                    failed: try row.bool("failed")))
        }
    }

    /// Where a lane is: its next step and when (nil: done), and whether a step of it failed.
    func save(runID: String, lane: Int64, nextStep: Int64, resumeMs: Int64?, failed: Bool) async throws(StorageError) {
        try await executor.query(
            "UPDATE automation_lanes SET next_step = $3, resume_ms = $4, failed = $5 WHERE run_id = $1 AND lane = $2",
            .text(runID), .int(lane), .int(nextStep), resumeMs.map(SQLValue.int) ?? .null, .int(failed ? 1 : 0))
    }

    func record(runID: String, _ step: AutomationStepBody) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO automation_steps (run_id, lane, step, did, at_ms, command_id, error_code, message) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (run_id, lane, step, did) DO NOTHING
            """,
            .text(runID), .int(Int64(step.lane)), .int(Int64(step.step)), .text(step.did), .int(step.at), step.commandID.map(SQLValue.int) ?? .null,
            step.errorCode.map { .int(Int64($0)) } ?? .null, .text(step.message))
    }

    /// Ends the run when none of its lanes has a step left: failed when any lane failed.
    func finishIfDone(runID: String, nowMs: Int64) async throws(StorageError) {
        let row = try await executor.first(
            "SELECT COUNT(*) AS open, COALESCE(MAX(failed), 0) AS failed FROM automation_lanes WHERE run_id = $1 AND resume_ms IS NOT NULL", .text(runID))
        guard try row?.int("open") ?? 0 == 0 else { return }
        let failed = try await executor.first("SELECT 1 AS failed FROM automation_lanes WHERE run_id = $1 AND failed <> 0", .text(runID)) != nil
        try await executor.query(
            "UPDATE automation_runs SET state = $2, finished_ms = $3 WHERE id = $1 AND finished_ms IS NULL", .text(runID),
            .text((failed ? State.failed : State.completed).rawValue), .int(nowMs))
    }

    /// The scene's latest run.
    func latest(sceneID: String) async throws(StorageError) -> Run? {
        try await executor.first("SELECT * FROM automation_runs WHERE scene_id = $1 ORDER BY started_ms DESC, id DESC LIMIT 1", .text(sceneID))
            .map(Self.run)
    }

    func steps(runID: String) async throws(StorageError) -> [AutomationStepBody] {
        try await executor.query("SELECT * FROM automation_steps WHERE run_id = $1 ORDER BY lane, step, at_ms, did", .text(runID)).map {
            row throws(StorageError) in
            AutomationStepBody(
                lane: Int(try row.int("lane")), step: Int(try row.int("step")), did: try row.text("did"), at: try row.int("at_ms"),
                commandID: row.optionalInt("command_id"), errorCode: row.optionalInt("error_code").map { Int(clamping: $0) }, message: try row.text("message"))
        }
    }

    /// Forgets finished runs older than `beforeMs`.
    func prune(beforeMs: Int64) async throws(StorageError) {
        try await executor.query("DELETE FROM automation_runs WHERE finished_ms IS NOT NULL AND finished_ms < $1", .int(beforeMs))
    }
}

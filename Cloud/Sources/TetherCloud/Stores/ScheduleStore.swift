import TetherCloudProtocol
import TetherCore

/// The `schedules` and `schedule_runs` tables.
struct ScheduleStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// A schedule as stored: its owner and its fields, with the next run derived from them.
    struct Record: Sendable {
        var id: String
        var uid: String
        var appID: String
        var productKey: String
        var fields: ScheduleFieldsBody
        var nextRunMs: Int64?
        var createdAt: Int64
        var updatedAt: Int64

        var body: ScheduleBody {
            ScheduleBody(id: id, fields: fields, productKey: productKey, createdAt: createdAt, updatedAt: updatedAt, nextRun: nextRunMs.map { $0 / 1000 })
        }
    }

    private static let columns = "id, uid, app_id, product_key, body, next_run_ms, created_at, updated_at"

    private static func record(_ row: SQLRow) throws(StorageError) -> Record {
        let text = try row.text("body")
        let fields: ScheduleFieldsBody
        do {
            fields = try ScheduleFieldsBody(json: try JSONValue.parse(text))
        } catch {
            throw StorageError(.unexpectedValue, "schedule \((try? row.text("id")) ?? "?") holds fields this build cannot read: \(error)")
        }
        return Record(
            id: try row.text("id"), uid: try row.text("uid"), appID: try row.text("app_id"), productKey: try row.text("product_key"), fields: fields,
            nextRunMs: row.optionalInt("next_run_ms"), createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }

    /// The user's schedules in all, and those of `did`, the user's row locked first (on
    /// PostgreSQL) so that two requests counting at once cannot both pass a limit: call on a
    /// transaction.
    func counts(uid: String, did: String?) async throws(StorageError) -> (all: Int64, device: Int64) {
        try await UserStore(executor).lockForCounting(uid: uid)
        let row = try await executor.first(
            "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN did = $2 THEN 1 ELSE 0 END), 0) AS d FROM schedules WHERE uid = $1", .text(uid), .text(did ?? ""))
        return (try row?.int("n") ?? 0, try row?.int("d") ?? 0)
    }

    func insert(_ record: Record) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO schedules (id, uid, app_id, did, group_id, scene_id, product_key, body, next_run_ms, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            """,
            .text(record.id), .text(record.uid), .text(record.appID), Self.target(record.fields.target, .device), Self.target(record.fields.target, .group),
            Self.target(record.fields.target, .scene), .text(record.productKey), .text(record.fields.json.serialized()),
            record.nextRunMs.map(SQLValue.int) ?? .null, .int(record.createdAt), .int(record.updatedAt))
    }

    private enum TargetColumn { case device, group, scene }

    private static func target(_ target: ScheduleTarget, _ column: TargetColumn) -> SQLValue {
        switch (target, column) {
        case (.device(let did), .device): return .text(did)
        case (.group(let id), .group): return .text(id)
        case (.scene(let id), .scene): return .text(id)
        default: return .null
        }
    }

    /// Replaces a schedule's fields and next run; false when it is not the user's.
    func update(_ record: Record) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            UPDATE schedules SET did = $3, group_id = $4, scene_id = $5, product_key = $6, body = $7, next_run_ms = $8, updated_at = $9
            WHERE id = $1 AND uid = $2 RETURNING id
            """,
            .text(record.id), .text(record.uid), Self.target(record.fields.target, .device), Self.target(record.fields.target, .group),
            Self.target(record.fields.target, .scene), .text(record.productKey), .text(record.fields.json.serialized()),
            record.nextRunMs.map(SQLValue.int) ?? .null, .int(record.updatedAt)) != nil
    }

    func find(id: String, uid: String) async throws(StorageError) -> Record? {
        try await executor.first("SELECT \(Self.columns) FROM schedules WHERE id = $1 AND uid = $2", .text(id), .text(uid)).map(Self.record)
    }

    /// The user's schedules, oldest first; each filter given narrows them.
    func list(uid: String, did: String?, groupID: String?, sceneID: String?, limit: Int, skip: Int) async throws(StorageError) -> [Record] {
        try await executor.query(
            """
            SELECT \(Self.columns) FROM schedules WHERE uid = $1 AND ($2 = '' OR did = $2) AND ($3 = '' OR group_id = $3) AND ($4 = '' OR scene_id = $4)
            ORDER BY created_at, id LIMIT $5 OFFSET $6
            """,
            .text(uid), .text(did ?? ""), .text(groupID ?? ""), .text(sceneID ?? ""), .int(Int64(limit)), .int(Int64(skip))
        ).map(Self.record)
    }

    /// Deletes one of the user's schedules (with its run log); the deleted one, or nil.
    func delete(id: String, uid: String) async throws(StorageError) -> Record? {
        try await executor.first("DELETE FROM schedules WHERE id = $1 AND uid = $2 RETURNING \(Self.columns)", .text(id), .text(uid)).map(Self.record)
    }

    // MARK: Firing

    /// Products of schedules due at `nowMs`: a look without a transaction (nothing due, the
    /// usual answer, holds no connection).
    func dueProductKeys(nowMs: Int64, limit: Int) async throws(StorageError) -> [String] {
        try await executor.query(
            """
            SELECT DISTINCT product_key FROM (SELECT product_key FROM schedules WHERE next_run_ms IS NOT NULL AND next_run_ms <= $1
            ORDER BY next_run_ms LIMIT $2) due
            """,
            .int(nowMs), .int(Int64(limit))
        ).map { row throws(StorageError) in try row.text("product_key") }
    }

    /// A due schedule as locked for firing: readable, or not (fields this build cannot read, a
    /// zone the node's database lacks), which must not stop the others.
    enum Due: Sendable {
        case schedule(Record)
        case unreadable(id: String, nextRunMs: Int64, reason: String)
    }

    /// Schedules due at `nowMs`, earliest first, locked for this transaction: on PostgreSQL,
    /// rows another node holds are skipped, so that every run is taken by one node. Call on a
    /// transaction.
    func lockDue(nowMs: Int64, limit: Int) async throws(StorageError) -> [Due] {
        let lock = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await executor.query(
            "SELECT \(Self.columns) FROM schedules WHERE next_run_ms IS NOT NULL AND next_run_ms <= $1 ORDER BY next_run_ms LIMIT $2\(lock)",
            .int(nowMs), .int(Int64(limit))
        ).map { row throws(StorageError) in
            do throws(StorageError) {
                return .schedule(try Self.record(row))
            } catch {
                return .unreadable(id: try row.text("id"), nextRunMs: try row.int("next_run_ms"), reason: error.message)
            }
        }
    }

    /// Locks one of the user's schedules for a change (on PostgreSQL; SQLite's transaction holds
    /// the database), so that a firing and an edit do not interleave: call on a transaction.
    func lock(id: String, uid: String) async throws(StorageError) -> Record? {
        let lock = executor.dialect == .postgres ? " FOR UPDATE" : ""
        return try await executor.first("SELECT \(Self.columns) FROM schedules WHERE id = $1 AND uid = $2\(lock)", .text(id), .text(uid)).map(Self.record)
    }

    /// The latest instant a run of the schedule was due (fired, refused or missed).
    func lastPlanned(scheduleID: String) async throws(StorageError) -> Int64? {
        try await executor.first("SELECT MAX(planned_ms) AS last FROM schedule_runs WHERE schedule_id = $1", .text(scheduleID))?.optionalInt("last")
    }

    func advance(id: String, nextRunMs: Int64?) async throws(StorageError) {
        try await executor.query("UPDATE schedules SET next_run_ms = $2 WHERE id = $1", .text(id), nextRunMs.map(SQLValue.int) ?? .null)
    }

    /// How a run ended when it was logged; a fired run's state from then on is its command's.
    enum RunOutcome: Sendable {
        case fired(commandID: Int64)
        /// A group's or a scene's run, under way as an automation run.
        case started(runID: String)
        case refused(code: Int, message: String)
        case missed

        /// The log row's state, command, run, code and message.
        var columns: (String, SQLValue, SQLValue, SQLValue, String) {
            switch self {
            case .fired(let command): ("fired", .int(command), .null, .null, "")
            case .started(let run): ("fired", .null, .text(run), .null, "")
            case .refused(let code, let message): ("refused", .null, .null, .int(Int64(code)), message)
            case .missed: ("missed", .null, .null, .null, "the cloud was not running when it was due")
            }
        }
    }

    /// Claims a run: its log row, before anything is sent. Nil when the run is logged already
    /// (the (schedule, planned instant) pair is unique): it is never fired twice.
    func claimRun(scheduleID: String, plannedMs: Int64, firedMs: Int64) async throws(StorageError) -> Int64? {
        try await executor.first(
            """
            INSERT INTO schedule_runs (schedule_id, planned_ms, fired_ms, state) VALUES ($1, $2, $3, 'fired')
            ON CONFLICT (schedule_id, planned_ms) DO NOTHING RETURNING id
            """,
            .text(scheduleID), .int(plannedMs), .int(firedMs)
        )?.int("id")
    }

    /// How a claimed run ended.
    func settleRun(_ id: Int64, _ outcome: RunOutcome) async throws(StorageError) {
        let (state, commandID, runID, code, message) = outcome.columns
        try await executor.query(
            "UPDATE schedule_runs SET state = $2, command_id = $3, run_id = $4, error_code = $5, message = $6 WHERE id = $1", .int(id), .text(state),
            commandID, runID, code, .text(message))
    }

    /// Logs a run that was not fired (missed, or a schedule that cannot be read), unless it is
    /// logged already.
    func logRun(scheduleID: String, plannedMs: Int64, firedMs: Int64, _ outcome: RunOutcome) async throws(StorageError) {
        let (state, commandID, runID, code, message) = outcome.columns
        let fired: SQLValue = if case .missed = outcome { .null } else { .int(firedMs) }
        try await executor.query(
            """
            INSERT INTO schedule_runs (schedule_id, planned_ms, fired_ms, state, command_id, run_id, error_code, message)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (schedule_id, planned_ms) DO NOTHING
            """,
            .text(scheduleID), .int(plannedMs), fired, .text(state), commandID, runID, code, .text(message))
    }

    /// A schedule's runs, newest first; a fired run reads as its command's state in the ledger, or
    /// its automation run's (a group's or a scene's: running, completed, failed).
    func runs(scheduleID: String, limit: Int, skip: Int) async throws(StorageError) -> [ScheduleRunBody] {
        try await executor.query(
            """
            SELECT r.id, r.planned_ms, r.fired_ms, r.state, r.command_id, r.run_id, r.error_code, r.message,
                COALESCE(c.state, a.state) AS command_state, c.code AS command_code, c.message AS command_message
            FROM schedule_runs r LEFT JOIN commands c ON c.id = r.command_id LEFT JOIN automation_runs a ON a.id = r.run_id
            WHERE r.schedule_id = $1 ORDER BY r.planned_ms DESC, r.id DESC LIMIT $2 OFFSET $3
            """,
            .text(scheduleID), .int(Int64(limit)), .int(Int64(skip))
        ).map { row throws(StorageError) in
            let fired = try row.text("state") == "fired"
            let code = fired ? row.optionalInt("command_code") : row.optionalInt("error_code")
            return ScheduleRunBody(
                id: try row.int("id"), scheduleID: scheduleID, plannedAt: try row.int("planned_ms"), firedAt: row.optionalInt("fired_ms"),
                commandID: row.optionalInt("command_id"), runID: row.optionalText("run_id"),
                state: fired ? row.optionalText("command_state") ?? "fired" : try row.text("state"),
                errorCode: code.map { Int(clamping: $0) }, message: fired ? row.optionalText("command_message") ?? "" : try row.text("message"))
        }
    }

    /// Forgets runs planned before `beforeMs`.
    func pruneRuns(beforeMs: Int64) async throws(StorageError) {
        try await executor.query("DELETE FROM schedule_runs WHERE planned_ms < $1", .int(beforeMs))
    }
}

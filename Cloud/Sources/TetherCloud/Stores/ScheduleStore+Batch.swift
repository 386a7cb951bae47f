import TetherCloudProtocol
import TetherCore

/// A batch of schedules' runs written together: a few many-row statements per batch instead of a
/// few statements per run (what keeps 10,000 runs due at once within seconds on PostgreSQL, where
/// each statement is a round trip).
extension ScheduleStore {
    /// A run: its schedule and the instant it was due.
    struct RunKey: Hashable, Sendable {
        var scheduleID: String
        var plannedMs: Int64
    }

    /// Rows per statement: below both engines' limits on bound parameters.
    private static let rowsPerStatement = 400

    private static func chunks<Element>(_ items: [Element]) -> [ArraySlice<Element>] {
        stride(from: 0, to: items.count, by: rowsPerStatement).map { items[$0..<min(items.count, $0 + rowsPerStatement)] }
    }

    /// Claims runs in the log before anything is sent, as `claimRun` does one: the log rows of
    /// those not logged already.
    func claimRuns(_ runs: [RunKey], firedMs: Int64) async throws(StorageError) -> [RunKey: Int64] {
        var claimed: [RunKey: Int64] = [:]
        for chunk in Self.chunks(runs) {
            var binds: [SQLValue] = [.int(firedMs)]
            let rows = chunk.map { run -> String in
                binds += [.text(run.scheduleID), .int(run.plannedMs)]
                return "($\(binds.count - 1), $\(binds.count), $1, 'fired')"
            }
            for row in try await executor.query(
                """
                INSERT INTO schedule_runs (schedule_id, planned_ms, fired_ms, state) VALUES \(rows.joined(separator: ", "))
                ON CONFLICT (schedule_id, planned_ms) DO NOTHING RETURNING id, schedule_id, planned_ms
                """, binds)
            {
                claimed[RunKey(scheduleID: try row.text("schedule_id"), plannedMs: try row.int("planned_ms"))] = try row.int("id")
            }
        }
        return claimed
    }

    /// Logs runs missed while the cloud was down, unless logged already.
    func logMissed(_ runs: [RunKey]) async throws(StorageError) {
        for chunk in Self.chunks(runs) {
            var binds: [SQLValue] = [.text(RunOutcome.missed.columns.4)]
            let rows = chunk.map { run -> String in
                binds += [.text(run.scheduleID), .int(run.plannedMs)]
                return "($\(binds.count - 1), $\(binds.count), 'missed', $1)"
            }
            try await executor.query(
                """
                INSERT INTO schedule_runs (schedule_id, planned_ms, state, message) VALUES \(rows.joined(separator: ", "))
                ON CONFLICT (schedule_id, planned_ms) DO NOTHING
                """, binds)
        }
    }

    /// The ledger entries of claimed runs that fired.
    func settleFired(_ runs: [(runID: Int64, commandID: Int64)]) async throws(StorageError) {
        for chunk in Self.chunks(runs) {
            var binds: [SQLValue] = []
            let cases = chunk.map { run -> String in
                binds += [.int(run.runID), .int(run.commandID)]
                return "WHEN $\(binds.count - 1) THEN $\(binds.count)"
            }
            let ids = chunk.map { run -> String in
                binds.append(.int(run.runID))
                return "$\(binds.count)"
            }
            try await executor.query(
                "UPDATE schedule_runs SET command_id = CASE id \(cases.joined(separator: " ")) END WHERE id IN (\(ids.joined(separator: ", ")))", binds)
        }
    }

    /// Claimed runs refused, with their code and why.
    func settleRefused(_ runs: [(runID: Int64, code: Int, message: String)]) async throws(StorageError) {
        for chunk in Self.chunks(runs) {
            var binds: [SQLValue] = []
            var codes: [String] = []
            var messages: [String] = []
            for run in chunk {
                binds += [.int(run.runID), .int(Int64(run.code)), .text(run.message)]
                codes.append("WHEN $\(binds.count - 2) THEN $\(binds.count - 1)")
                messages.append("WHEN $\(binds.count - 2) THEN $\(binds.count)")
            }
            let ids = chunk.map { run -> String in
                binds.append(.int(run.runID))
                return "$\(binds.count)"
            }
            try await executor.query(
                """
                UPDATE schedule_runs SET state = 'refused', error_code = CASE id \(codes.joined(separator: " ")) END,
                    message = CASE id \(messages.joined(separator: " ")) END
                WHERE id IN (\(ids.joined(separator: ", ")))
                """, binds)
        }
    }

    /// Moves schedules to their next runs (nil: none left).
    func advance(_ next: [(id: String, nextRunMs: Int64?)]) async throws(StorageError) {
        let done = next.filter { $0.nextRunMs == nil }.map(\.id)
        for chunk in Self.chunks(done) {
            let placeholders = chunk.indices.map { "$\($0 - chunk.startIndex + 1)" }.joined(separator: ", ")
            try await executor.query("UPDATE schedules SET next_run_ms = NULL WHERE id IN (\(placeholders))", chunk.map(SQLValue.text))
        }
        let moving = next.compactMap { entry in entry.nextRunMs.map { (entry.id, $0) } }
        for chunk in Self.chunks(moving) {
            var binds: [SQLValue] = []
            let cases = chunk.map { entry -> String in
                binds += [.text(entry.0), .int(entry.1)]
                return "WHEN $\(binds.count - 1) THEN $\(binds.count)"
            }
            let ids = chunk.map { entry -> String in
                binds.append(.text(entry.0))
                return "$\(binds.count)"
            }
            try await executor.query(
                "UPDATE schedules SET next_run_ms = CASE id \(cases.joined(separator: " ")) END WHERE id IN (\(ids.joined(separator: ", ")))", binds)
        }
    }
}

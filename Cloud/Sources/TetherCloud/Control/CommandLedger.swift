import TetherCore

/// The command ledger in the database: every control gets a row whose state only moves
/// forward (see ``CommandState``), so that "delivered" never lies.
public struct CommandLedger: Sendable {
    let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    func insert(
        did: String, uid: String, appID: String, kind: CommandKind, body: JSONValue, state: CommandState, queueUntilMs: Int64?, jobID: Int64? = nil,
        source: CommandSource = .app, on executor: (any SQLExecutor)? = nil
    ) async throws(StorageError) -> CommandRecord {
        let now = Clock.unixMilliseconds()
        guard
            let row = try await (executor ?? database).first(
                """
                INSERT INTO commands (did, uid, app_id, kind, body, state, created_ms, updated_ms, queue_until_ms, job_id, source)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $10) RETURNING \(CommandRecord.columns)
                """,
                .text(did), .text(uid), .text(appID), .text(kind.rawValue), .text(body.serialized()), .text(state.rawValue),
                .int(now), queueUntilMs.map(SQLValue.int) ?? .null, jobID.map(SQLValue.int) ?? .null, .text(source.rawValue)
            )
        else {
            throw StorageError(.queryFailed, "inserting a command returned no row")
        }
        return try CommandRecord(row: row)
    }

    /// A command to insert with others (`insertMany`).
    struct NewCommand: Sendable, Hashable {
        var did: String
        var uid: String
        var appID: String
        var kind: CommandKind
        var body: String
        var state: CommandState
        var queueUntilMs: Int64?
        var source: CommandSource
    }

    /// Inserts commands, many to a statement, on `executor`; their records in the order given.
    func insertMany(_ commands: [NewCommand], on executor: any SQLExecutor) async throws(StorageError) -> [CommandRecord] {
        let now = Clock.unixMilliseconds()
        var records: [CommandRecord] = []
        var start = 0
        while start < commands.count {
            let chunk = Array(commands[start..<min(commands.count, start + 400)])
            var binds: [SQLValue] = []
            var rows: [String] = []
            for command in chunk {
                let base = binds.count
                rows.append("(" + (1...9).map { "$\(base + $0)" }.joined(separator: ", ") + ", $\(base + 6))")
                binds += [
                    .text(command.did), .text(command.uid), .text(command.appID), .text(command.kind.rawValue), .text(command.body),
                    .int(now), .text(command.state.rawValue), command.queueUntilMs.map(SQLValue.int) ?? .null, .text(command.source.rawValue),
                ]
            }
            let inserted = try await executor.query(
                """
                INSERT INTO commands (did, uid, app_id, kind, body, created_ms, state, queue_until_ms, source, updated_ms)
                VALUES \(rows.joined(separator: ", ")) RETURNING \(CommandRecord.columns)
                """, binds)
            // Matched by what was inserted, not by the order rows come back in (which SQL does
            // not promise); identical commands are interchangeable.
            var waiting: [NewCommand: [Int]] = [:]
            for (index, command) in chunk.enumerated() { waiting[command, default: []].append(index) }
            var ordered = [CommandRecord?](repeating: nil, count: chunk.count)
            for row in inserted {
                let key = NewCommand(
                    did: try row.text("did"), uid: try row.text("uid"), appID: try row.text("app_id"),
                    kind: CommandKind(rawValue: try row.text("kind")) ?? .raw, body: try row.text("body"),
                    state: CommandState(rawValue: try row.text("state")) ?? .accepted, queueUntilMs: row.optionalInt("queue_until_ms"),
                    source: CommandSource(rawValue: try row.text("source")) ?? .app)
                guard let index = waiting[key]?.popLast() else { throw StorageError(.queryFailed, "an inserted command was not one asked for") }
                ordered[index] = try CommandRecord(row: row)
            }
            guard ordered.allSatisfy({ $0 != nil }) else { throw StorageError(.queryFailed, "inserting commands returned fewer rows") }
            records += ordered.map { $0! }
            start += chunk.count
        }
        return records
    }

    public func find(_ id: Int64) async throws(StorageError) -> CommandRecord? {
        try await database.first("SELECT \(CommandRecord.columns) FROM commands WHERE id = $1", .int(id)).map { row throws(StorageError) in
            try CommandRecord(row: row)
        }
    }

    /// A device's commands, newest first.
    func list(did: String, limit: Int, skip: Int) async throws(StorageError) -> [CommandRecord] {
        try await database.query(
            "SELECT \(CommandRecord.columns) FROM commands WHERE did = $1 ORDER BY id DESC LIMIT $2 OFFSET $3",
            .text(did), .int(Int64(limit)), .int(Int64(skip))
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// Moves a command to `state` if it is in one of `from`; nil when it was not (another node
    /// or an earlier answer moved it first). On `executor` when given (a transaction's).
    @discardableResult
    func move(
        _ id: Int64, did: String? = nil, from: Set<CommandState>, to state: CommandState, code: Int? = nil, message: String? = nil, body: JSONValue? = nil,
        on executor: (any SQLExecutor)? = nil
    ) async throws(StorageError) -> CommandRecord? {
        let now = Clock.unixMilliseconds()
        let allowed = from.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
        // A command sent again keeps the time it was first sent: its answer deadline stays.
        let sent = state == .sent ? ", sent_ms = COALESCE(sent_ms, $2)" : ""
        return try await (executor ?? database).first(
            """
            UPDATE commands SET state = $3, updated_ms = $2, code = COALESCE($4, code), message = COALESCE($5, message),
                body = COALESCE($7, body)\(sent)
            WHERE id = $1 AND state IN (\(allowed)) AND ($6 = '' OR did = $6) RETURNING \(CommandRecord.columns)
            """,
            .int(id), .int(now), .text(state.rawValue), code.map { .int(Int64($0)) } ?? .null, message.map(SQLValue.text) ?? .null,
            .text(did ?? ""), body.map { .text($0.serialized()) } ?? .null
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// What to send a device that (re)connects, oldest first: commands queued for it whose
    /// time-to-live has not passed, commands accepted and never sent (the cloud stopped before
    /// it sent them), and data-point writes sent without an answer (the device or the cloud
    /// went away before it answered; writing the same values again does no harm), each before
    /// its answer deadline. Service calls and raw bytes already sent are not sent twice, and
    /// nothing is sent again that a later write, already acknowledged, overtook: the device
    /// would go back to older values.
    func resumable(did: String, now: Int64, answerTimeoutMs: Int64) async throws(StorageError) -> [CommandRecord] {
        try await resumable(dids: [did], now: now, answerTimeoutMs: answerTimeoutMs)
    }

    /// ``resumable(did:now:answerTimeoutMs:)`` of many devices at once (a connect storm's), a
    /// query per few hundred devices; in id order.
    func resumable(dids: [String], now: Int64, answerTimeoutMs: Int64) async throws(StorageError) -> [CommandRecord] {
        var records: [CommandRecord] = []
        for chunk in dids.chunked(into: 500) {
            let placeholders = (0..<chunk.count).map { "$\($0 + 3)" }.joined(separator: ", ")
            records += try await database.query(
                """
                SELECT \(CommandRecord.columns) FROM commands c WHERE did IN (\(placeholders)) AND (
                    (state = 'queued' AND queue_until_ms > $1)
                    OR (state = 'accepted' AND created_ms > $2)
                    OR (state = 'sent' AND kind = 'attrs' AND sent_ms > $2))
                AND NOT (c.state <> 'queued' AND c.kind = 'attrs' AND EXISTS (
                    SELECT 1 FROM commands later WHERE later.did = c.did AND later.id > c.id AND later.kind = 'attrs'
                    AND later.state IN ('acknowledged', 'applied')))
                ORDER BY id
                """,
                [.int(now), .int(now - answerTimeoutMs)] + chunk.map(SQLValue.text)
            ).map { row throws(StorageError) in try CommandRecord(row: row) }
        }
        return dids.count > 500 ? records.sorted { $0.id < $1.id } : records
    }

    /// Commands accepted and not yet sent, before their answer deadline, of every device: a
    /// node that starts asks for their delivery, in case the node that accepted them stopped
    /// before it did.
    func unsent(now: Int64, answerTimeoutMs: Int64) async throws(StorageError) -> [CommandRecord] {
        try await database.query(
            "SELECT \(CommandRecord.columns) FROM commands WHERE state = 'accepted' AND created_ms > $1 ORDER BY id",
            .int(now - answerTimeoutMs)
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// Fails what `uid` asked of `did` and was not sent yet (queued for an offline device, or
    /// accepted): the user may no longer act on the device.
    func failWaiting(did: String, uid: String, message: String) async throws(StorageError) -> [CommandRecord] {
        try await database.query(
            """
            UPDATE commands SET state = 'failed', updated_ms = $3, message = $4
            WHERE did = $1 AND uid = $2 AND state IN ('queued', 'accepted') RETURNING \(CommandRecord.columns)
            """,
            .text(did), .text(uid), .int(Clock.unixMilliseconds()), .text(message)
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// Commands of a device whose values a report could show applied.
    func awaitingApplication(did: String, on executor: (any SQLExecutor)? = nil) async throws(StorageError) -> [CommandRecord] {
        try await (executor ?? database).query(
            "SELECT \(CommandRecord.columns) FROM commands WHERE did = $1 AND kind = 'attrs' AND state IN ('sent', 'acknowledged') ORDER BY id",
            .text(did)
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// Expires queued commands whose time-to-live passed, commands sent (or accepted and never
    /// sent) without an answer for `answerTimeoutMs`, and upgrades not finished by their
    /// deadline (`queue_until_ms`: an upgrade takes minutes, not an answer's seconds). Raw bytes
    /// get no answer, so a sent raw command stays sent. Returns what changed.
    func expire(now: Int64, answerTimeoutMs: Int64) async throws(StorageError) -> [CommandRecord] {
        let queued = try await database.query(
            """
            UPDATE commands SET state = 'expired', updated_ms = $1, message = 'the device did not come back in time'
            WHERE state = 'queued' AND queue_until_ms <= $1 RETURNING \(CommandRecord.columns)
            """,
            .int(now)
        )
        let unanswered = try await database.query(
            """
            UPDATE commands SET state = 'expired', updated_ms = $1, message = 'the device did not answer in time'
            WHERE (state = 'sent' AND kind NOT IN ('raw', 'ota') AND sent_ms <= $2) OR (state = 'accepted' AND created_ms <= $2)
            RETURNING \(CommandRecord.columns)
            """,
            .int(now), .int(now - answerTimeoutMs)
        )
        let upgrades = try await database.query(
            """
            UPDATE commands SET state = 'expired', updated_ms = $1, message = 'the upgrade did not finish in time'
            WHERE kind = 'ota' AND state IN ('sent', 'acknowledged') AND queue_until_ms <= $1 RETURNING \(CommandRecord.columns)
            """,
            .int(now)
        )
        return try (queued + unanswered + upgrades).map { row throws(StorageError) in try CommandRecord(row: row) }
    }
}

import TetherCloudProtocol
import TetherCore

/// The `rules` and `rule_events` tables.
struct RuleStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    struct Record: Sendable {
        var id: String
        var uid: String
        var appID: String
        var fields: RuleFieldsBody
        var lastFiredMs: Int64?
        var createdAt: Int64
        var updatedAt: Int64

        var body: RuleBody { RuleBody(id: id, fields: fields, createdAt: createdAt, updatedAt: updatedAt, lastFiredAt: lastFiredMs) }
    }

    /// A watched device's event, waiting to be taken.
    struct Event: Sendable {
        enum Kind: String, Sendable {
            /// A report: `body` is the reported data points as apps see them.
            case data
            /// An event of the thing model: `body` is `{identifier, type}`.
            case event
            case online, offline
        }

        var id: Int64
        var did: String
        var kind: Kind
        var body: JSONValue
        var createdMs: Int64
    }

    private static func record(_ row: SQLRow) throws(StorageError) -> Record {
        guard let json = try? JSONValue.parse(try row.text("body")), let fields = try? RuleFieldsBody(json: json) else {
            throw StorageError.unexpectedValue(column: "body")
        }
        return Record(
            id: try row.text("id"), uid: try row.text("uid"), appID: try row.text("app_id"), fields: fields, lastFiredMs: row.optionalInt("last_fired_ms"),
            createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }

    /// The user's rules, the user's row locked first: call on a transaction.
    func count(uid: String) async throws(StorageError) -> Int64 {
        try await UserStore(executor).lockForCounting(uid: uid)
        return try await executor.first("SELECT COUNT(*) AS n FROM rules WHERE uid = $1", .text(uid))?.int("n") ?? 0
    }

    func insert(_ record: Record) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO rules (id, uid, app_id, did, event, body, interval_s, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
            """,
            .text(record.id), .text(record.uid), .text(record.appID), .text(record.fields.did), .text(record.fields.event.rawValue),
            .text(record.fields.json.serialized()), .int(record.fields.interval), .int(record.createdAt))
    }

    /// Replaces a rule's fields; what it saw of its alert starts afresh.
    func update(id: String, uid: String, _ fields: RuleFieldsBody, now: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            UPDATE rules SET did = $3, event = $4, body = $5, interval_s = $6, trigger_value = NULL, updated_at = $7, revision = revision + 1
            WHERE id = $1 AND uid = $2 RETURNING id
            """,
            .text(id), .text(uid), .text(fields.did), .text(fields.event.rawValue), .text(fields.json.serialized()), .int(fields.interval), .int(now)) != nil
    }

    func find(id: String, uid: String) async throws(StorageError) -> Record? {
        try await executor.first("SELECT * FROM rules WHERE id = $1 AND uid = $2", .text(id), .text(uid)).map(Self.record)
    }

    func list(uid: String, limit: Int, skip: Int) async throws(StorageError) -> [Record] {
        try await executor.query(
            "SELECT * FROM rules WHERE uid = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3", .text(uid), .int(Int64(limit)), .int(Int64(skip))
        ).map(Self.record)
    }

    func delete(id: String, uid: String) async throws(StorageError) -> Bool {
        try await executor.first("DELETE FROM rules WHERE id = $1 AND uid = $2 RETURNING id", .text(id), .text(uid)) != nil
    }

    /// The devices some rule watches.
    func watchedDevices() async throws(StorageError) -> Set<String> {
        Set(try await executor.query("SELECT DISTINCT did FROM rules").map { row throws(StorageError) in try row.text("did") })
    }

    /// Which rules each of `dids` triggers, oldest first, with their revision.
    func ruleRevisions(triggeredBy dids: Set<String>) async throws(StorageError) -> [(id: String, revision: Int64)] {
        guard !dids.isEmpty else { return [] }
        let list = dids.sorted()
        let placeholders = list.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return try await executor.query(
            "SELECT id, revision FROM rules WHERE did IN (\(placeholders)) ORDER BY created_at, id", list.map(SQLValue.text)
        ).map { row throws(StorageError) in (try row.text("id"), try row.int("revision")) }
    }

    /// Rules by id, with their revision; a rule that cannot be read is left out.
    func rules(ids: [String]) async throws(StorageError) -> [(record: Record, revision: Int64)] {
        guard !ids.isEmpty else { return [] }
        let placeholders = ids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return try await executor.query("SELECT * FROM rules WHERE id IN (\(placeholders))", ids.map(SQLValue.text)).compactMap { row in
            guard let record = try? Self.record(row), let revision = try? row.int("revision") else { return nil }
            return (record, revision)
        }
    }

    /// Which of the (user, device) pairs among `dids` are bindings.
    func bindings(of dids: Set<String>) async throws(StorageError) -> Set<String> {
        guard !dids.isEmpty else { return [] }
        let list = dids.sorted()
        let placeholders = list.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return Set(
            try await executor.query("SELECT uid, did FROM bindings WHERE did IN (\(placeholders))", list.map(SQLValue.text)).map {
                row throws(StorageError) in "\(try row.text("uid"))\u{1F}\(try row.text("did"))"
            })
    }

    /// Records the value of the rule's alert or fault; true when it changed (a transition). A
    /// rule that saw nothing yet counts the value as 0 before.
    func transition(ruleID: String, to value: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE rules SET trigger_value = $2 WHERE id = $1 AND COALESCE(trigger_value, 0) <> $2 RETURNING id", .text(ruleID), .int(value)) != nil
    }

    /// Marks the rule fired at `nowMs` unless it fired less than its interval ago.
    func claimFiring(ruleID: String, nowMs: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            UPDATE rules SET last_fired_ms = $2 WHERE id = $1 AND (last_fired_ms IS NULL OR interval_s = 0 OR last_fired_ms + interval_s * 1000 <= $2)
            RETURNING id
            """,
            .text(ruleID), .int(nowMs)) != nil
    }

    /// The latest status of each device, as apps see it.
    func statuses(_ dids: [String]) async throws(StorageError) -> [String: JSONObject] {
        guard !dids.isEmpty else { return [:] }
        let placeholders = dids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        var statuses: [String: JSONObject] = [:]
        for row in try await executor.query("SELECT did, attrs FROM device_status WHERE did IN (\(placeholders))", dids.map(SQLValue.text)) {
            statuses[try row.text("did")] = (try? JSONValue.parse(try row.text("attrs")))?.objectValue
        }
        return statuses
    }

    /// The products of the devices `uid` is bound to.
    func boundProducts(uid: String) async throws(StorageError) -> [String] {
        try await executor.query(
            "SELECT DISTINCT d.product_key FROM bindings b JOIN devices d ON d.did = b.did WHERE b.uid = $1 ORDER BY d.product_key", .text(uid)
        ).map { row throws(StorageError) in try row.text("product_key") }
    }

    // MARK: The outbox

    /// Writes events, many to a statement; their ids.
    @discardableResult
    func enqueue(_ events: [(did: String, kind: Event.Kind, body: JSONValue)], atMs: Int64) async throws(StorageError) -> [Int64] {
        var ids: [Int64] = []
        var start = 0
        while start < events.count {
            let chunk = events[start..<min(events.count, start + 200)]
            var binds: [SQLValue] = []
            var rows: [String] = []
            for event in chunk {
                let base = binds.count
                rows.append("($\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4))")
                binds += [.text(event.did), .text(event.kind.rawValue), .text(event.body.serialized()), .int(atMs)]
            }
            for row in try await executor.query(
                "INSERT INTO rule_events (did, kind, body, created_ms) VALUES \(rows.joined(separator: ", ")) RETURNING id", binds)
            {
                ids.append(try row.int("id"))
            }
            start += chunk.count
        }
        return ids.sorted()
    }

    /// Whether any event was written before `beforeMs`: a look without a transaction.
    func anyEvents(beforeMs: Int64) async throws(StorageError) -> Bool {
        try await executor.first("SELECT 1 AS waiting FROM rule_events WHERE created_ms < $1 LIMIT 1", .int(beforeMs)) != nil
    }

    /// Locks events to take, oldest first: those of `ids`, or any written before `beforeMs` (a
    /// node that wrote them and stopped). On PostgreSQL others' locks are skipped.
    func lockEvents(ids: [Int64]?, beforeMs: Int64, limit: Int) async throws(StorageError) -> [Event] {
        let lock = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let rows: [SQLRow]
        if let ids {
            guard !ids.isEmpty else { return [] }
            let placeholders = ids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
            rows = try await executor.query("SELECT * FROM rule_events WHERE id IN (\(placeholders)) ORDER BY id\(lock)", ids.map(SQLValue.int))
        } else {
            rows = try await executor.query(
                "SELECT * FROM rule_events WHERE created_ms < $1 ORDER BY id LIMIT $2\(lock)", .int(beforeMs), .int(Int64(limit)))
        }
        return rows.compactMap { row in
            guard let id = try? row.int("id"), let did = try? row.text("did") else { return nil }
            let kind = (try? row.text("kind")).flatMap(Event.Kind.init(rawValue:)) ?? .data
            let body = (try? row.text("body")).flatMap { try? JSONValue.parse($0) } ?? .null
            return Event(id: id, did: did, kind: kind, body: body, createdMs: (try? row.int("created_ms")) ?? 0)
        }
    }

    func deleteEvents(_ ids: [Int64]) async throws(StorageError) {
        guard !ids.isEmpty else { return }
        let placeholders = ids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        try await executor.query("DELETE FROM rule_events WHERE id IN (\(placeholders))", ids.map(SQLValue.int))
    }
}

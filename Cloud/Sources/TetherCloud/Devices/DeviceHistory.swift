import TetherCore

/// What devices reported and what was sent to them: the latest status of each device and its
/// traffic and connectivity log (`/app/devices/{did}/raw_data`).
public struct DeviceHistory: Sendable {
    let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// Kinds of log entries, as the Open API names them.
    enum Kind: String {
        case deviceToApp = "dev2app", appToDevice = "app2dev"
        case online = "dev_online", reOnline = "dev_re_online", offline = "dev_offline"
    }

    /// Stores many reports in one transaction, in order: each device's latest status merged
    /// with what it reported, and one log row per report. Returns each device's whole status.
    /// Statements carry many rows each (a round trip per chunk, not per report), which is what
    /// matters on PostgreSQL.
    func storeReports(
        _ reports: [(did: String, attrs: JSONObject)], atMs: Int64, rowsPerStatement: Int = Self.rowsPerStatement
    ) async throws -> [String: JSONObject] {
        try await storeReports(reports, atMs: atMs, rowsPerStatement: rowsPerStatement) { _, _ in () }.statuses
    }

    /// ``storeReports(_:atMs:rowsPerStatement:)`` with `alongside` written in the same
    /// transaction (what the reports set off, such as rule events and commands they show
    /// applied): both or neither. `alongside` sees the statuses as stored.
    func storeReports<Extra: Sendable>(
        _ reports: [(did: String, attrs: JSONObject)], atMs: Int64, rowsPerStatement: Int = Self.rowsPerStatement,
        alongside: @escaping @Sendable (any SQLExecutor, [String: JSONObject]) async throws -> Extra
    ) async throws -> (statuses: [String: JSONObject], extra: Extra) {
        guard !reports.isEmpty else { return ([:], try await alongside(database, [:])) }
        var seen = Set<String>()
        let order = reports.map(\.did).filter { seen.insert($0).inserted }
        return try await database.transaction { transaction -> ([String: JSONObject], Extra) in
            var statuses: [String: JSONObject] = [:]
            for chunk in order.chunked(into: rowsPerStatement) {
                let placeholders = (1...chunk.count).map { "$\($0)" }.joined(separator: ", ")
                for row in try await transaction.query("SELECT did, attrs FROM device_status WHERE did IN (\(placeholders))", chunk.map(SQLValue.text)) {
                    statuses[try row.text("did")] = (try? JSONValue.parse(try row.text("attrs")))?.objectValue
                }
            }
            for report in reports {
                var status = statuses[report.did] ?? JSONObject()
                for key in report.attrs.keys { status[key] = report.attrs[key] }
                statuses[report.did] = status
            }
            for chunk in reports.chunked(into: max(1, rowsPerStatement / 4)) {
                var binds: [SQLValue] = []
                var rows: [String] = []
                for report in chunk {
                    let base = binds.count
                    rows.append("($\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4))")
                    binds += [.text(report.did), .text(Kind.deviceToApp.rawValue), .int(atMs), .text(JSONValue.object(report.attrs).serialized())]
                }
                try await transaction.query("INSERT INTO device_log (did, kind, at_ms, body) VALUES \(rows.joined(separator: ", "))", binds)
            }
            for chunk in order.chunked(into: max(1, rowsPerStatement / 3)) {
                var binds: [SQLValue] = []
                var rows: [String] = []
                for did in chunk {
                    let base = binds.count
                    rows.append("($\(base + 1), $\(base + 2), $\(base + 3))")
                    binds += [.text(did), .text(JSONValue.object(statuses[did] ?? [:]).serialized()), .int(atMs)]
                }
                try await transaction.query(
                    """
                    INSERT INTO device_status (did, attrs, updated_ms) VALUES \(rows.joined(separator: ", "))
                    ON CONFLICT (did) DO UPDATE SET attrs = excluded.attrs, updated_ms = excluded.updated_ms
                    """,
                    binds
                )
            }
            return (statuses, try await alongside(transaction, statuses))
        }
    }

    /// Bound parameters per statement: below SQLite's limit (32,766) and PostgreSQL's (65,535).
    static let rowsPerStatement = 900

    /// The latest status and when it was reported; nil when the device never reported.
    func status(did: String) async throws(StorageError) -> (attrs: JSONObject, updatedMs: Int64)? {
        guard let row = try await database.first("SELECT attrs, updated_ms FROM device_status WHERE did = $1", .text(did)) else { return nil }
        return ((try? JSONValue.parse(try row.text("attrs")).objectValue) ?? [:], try row.int("updated_ms"))
    }

    /// Adds a row to the log, on `executor` when given (a transaction's); the row's id.
    @discardableResult
    func log(
        did: String, kind: Kind, atMs: Int64, body: JSONValue = .null, payloadHex: String = "", ip: String = "", uid: String? = nil, appID: String? = nil,
        source: String? = nil, on executor: (any SQLExecutor)? = nil
    ) async throws(StorageError) -> Int64 {
        guard
            let row = try await (executor ?? database).first(
                """
                INSERT INTO device_log (did, kind, at_ms, ip, body, payload_hex, uid, app_id, source) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                RETURNING id
                """,
                .text(did), .text(kind.rawValue), .int(atMs), .text(ip), .text(body == .null ? "" : body.serialized()), .text(payloadHex),
                .optional(uid), .optional(appID), .optional(source)
            )
        else {
            throw StorageError(.queryFailed, "adding to the device log returned no row")
        }
        return try row.int("id")
    }

    /// Takes back a row that turned out untrue (what was logged as sent could not be).
    func removeLog(id: Int64, on executor: (any SQLExecutor)? = nil) async throws(StorageError) {
        try await (executor ?? database).query("DELETE FROM device_log WHERE id = $1", .int(id))
    }

    /// One row of the log.
    struct Entry: Sendable {
        var did: String
        var kind: Kind
        var atMs: Int64
        var body: JSONValue = .null
        var ip = ""
    }

    /// Many rows of the log, in order, a statement per few hundred, on `executor` (a
    /// transaction's connection, or the database).
    static func log(_ entries: [Entry], on executor: any SQLExecutor) async throws(StorageError) {
        for chunk in entries.chunked(into: rowsPerStatement / 5) {
            var binds: [SQLValue] = []
            var rows: [String] = []
            for entry in chunk {
                let base = binds.count
                rows.append("($\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4), $\(base + 5))")
                binds += [
                    .text(entry.did), .text(entry.kind.rawValue), .int(entry.atMs), .text(entry.ip), .text(entry.body == .null ? "" : entry.body.serialized()),
                ]
            }
            try await executor.query("INSERT INTO device_log (did, kind, at_ms, ip, body) VALUES \(rows.joined(separator: ", "))", binds)
        }
    }

    struct LogQuery {
        var did: String
        var kinds: [Kind]
        var startMs: Int64
        var endMs: Int64
        var skip: Int
        var limit: Int
        var ascending: Bool
    }

    func entries(_ query: LogQuery) async throws(StorageError) -> (total: Int, entries: [JSONValue]) {
        let kinds = query.kinds.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let filter = "did = $1 AND kind IN (\(kinds)) AND at_ms >= $2 AND at_ms <= $3"
        let total =
            try await database.first("SELECT COUNT(*) AS total FROM device_log WHERE \(filter)", .text(query.did), .int(query.startMs), .int(query.endMs))?.int(
                "total") ?? 0
        let rows = try await database.query(
            "SELECT kind, at_ms, ip, body, payload_hex, uid, app_id, source FROM device_log WHERE \(filter) ORDER BY at_ms \(query.ascending ? "ASC" : "DESC"), id \(query.ascending ? "ASC" : "DESC") LIMIT $4 OFFSET $5",
            .text(query.did), .int(query.startMs), .int(query.endMs), .int(Int64(query.limit)), .int(Int64(query.skip))
        )
        let entries = try rows.map { row throws(StorageError) -> JSONValue in
            var object: JSONObject = [
                "type": .string(try row.text("kind")), "ip": .string(try row.text("ip")),
                "payload_bin": .string(try row.text("payload_hex")), "timestamp": .double(Double(try row.int("at_ms")) / 1000),
            ]
            if let body = try? JSONValue.parse(try row.text("body")) { object["body"] = body }
            if let uid = row.optionalText("uid") { object["uid"] = .string(uid) }
            if let appID = row.optionalText("app_id") { object["appid"] = .string(appID) }
            if let source = row.optionalText("source") { object["source"] = .string(source) }
            return .object(object)
        }
        return (Int(total), entries)
    }
}

extension Array {
    /// The array cut into consecutive pieces of at most `size` elements.
    func chunked(into size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

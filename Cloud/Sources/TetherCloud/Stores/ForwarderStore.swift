import TetherCore

/// A product's forwarder: where its devices' messages are pushed.
public struct ForwarderRecord: Sendable, Equatable {
    public var id: Int64
    public var productKey: String
    public var url: String
    /// The key of the body's HMAC-SHA256 (`X-Tether-Signature`).
    public var secret: String
    public var kinds: Set<ForwardKind>
    public var createdMs: Int64

    init(row: SQLRow) throws {
        id = try row.int("id")
        productKey = try row.text("product_key")
        url = try row.text("url")
        secret = try row.text("secret")
        kinds = try ForwardKind.parse(try row.text("kinds"))
        createdMs = try row.int("created_ms")
    }

    static let columns = "id, product_key, url, secret, kinds, created_ms"
}

/// A message of the forwarding outbox, leased for delivery.
struct ForwardItem: Sendable {
    var id: Int64
    var forwarderID: Int64
    var body: String
    var attempts: Int64
}

/// The `forwarders` and `forward_outbox` tables.
struct ForwarderStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    func insert(productKey: String, url: String, secret: String, kinds: Set<ForwardKind>, atMs: Int64) async throws -> ForwarderRecord {
        guard
            let row = try await executor.first(
                "INSERT INTO forwarders (product_key, url, secret, kinds, created_ms) VALUES ($1, $2, $3, $4, $5) RETURNING \(ForwarderRecord.columns)",
                .text(productKey), .text(url), .text(secret), .text(ForwardKind.encode(kinds)), .int(atMs))
        else { throw StorageError(.unexpectedValue, "the new forwarder was not returned") }
        return try ForwarderRecord(row: row)
    }

    func list(productKey: String? = nil) async throws -> [ForwarderRecord] {
        let rows =
            if let productKey {
                try await executor.query("SELECT \(ForwarderRecord.columns) FROM forwarders WHERE product_key = $1 ORDER BY id", .text(productKey))
            } else {
                try await executor.query("SELECT \(ForwarderRecord.columns) FROM forwarders ORDER BY id")
            }
        return try rows.map { try ForwarderRecord(row: $0) }
    }

    func remove(_ id: Int64) async throws(StorageError) -> Bool {
        try await executor.first("DELETE FROM forwarders WHERE id = $1 RETURNING id", .int(id)) != nil
    }

    /// Adds messages to the outbox, due now, in one statement.
    func enqueue(_ items: [(forwarderID: Int64, body: String)], atMs: Int64) async throws(StorageError) {
        guard !items.isEmpty else { return }
        var values: [String] = []
        var binds: [SQLValue] = [.int(atMs)]
        for item in items {
            values.append("($\(binds.count + 1), $\(binds.count + 2), $1, $1)")
            binds += [.int(item.forwarderID), .text(item.body)]
        }
        try await executor.query(
            "INSERT INTO forward_outbox (forwarder_id, body, next_attempt_ms, created_ms) VALUES \(values.joined(separator: ", "))", binds)
    }

    /// Whether any message is due (a read: nodes look often, and most of the time there is none).
    func anyDue(now: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            "SELECT id FROM forward_outbox WHERE delivered_ms IS NULL AND failed_ms IS NULL AND next_attempt_ms <= $1 AND lease_until_ms <= $1 LIMIT 1",
            .int(now)) != nil
    }

    /// Leases up to `limit` due messages until `leaseUntilMs`: no other node takes them meanwhile.
    func claim(now: Int64, leaseUntilMs: Int64, limit: Int) async throws(StorageError) -> [ForwardItem] {
        let locking = executor.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await executor.query(
            """
            UPDATE forward_outbox SET lease_until_ms = $2 WHERE id IN (
                SELECT id FROM forward_outbox WHERE delivered_ms IS NULL AND failed_ms IS NULL AND next_attempt_ms <= $1 AND lease_until_ms <= $1
                ORDER BY id LIMIT $3\(locking))
            RETURNING id, forwarder_id, body, attempts
            """,
            .int(now), .int(leaseUntilMs), .int(Int64(limit))
        ).map { row throws(StorageError) in
            ForwardItem(id: try row.int("id"), forwarderID: try row.int("forwarder_id"), body: try row.text("body"), attempts: try row.int("attempts"))
        }.sorted { $0.id < $1.id }
    }

    func delivered(_ id: Int64, atMs: Int64) async throws(StorageError) {
        try await executor.query("UPDATE forward_outbox SET delivered_ms = $2, attempts = attempts + 1 WHERE id = $1", .int(id), .int(atMs))
    }

    /// Another attempt at `nextMs`, or none (`failed`) when the message has had enough.
    func attemptFailed(_ id: Int64, error: String, nextMs: Int64?, atMs: Int64) async throws(StorageError) {
        if let nextMs {
            try await executor.query(
                "UPDATE forward_outbox SET attempts = attempts + 1, next_attempt_ms = $2, lease_until_ms = 0, last_error = $3 WHERE id = $1",
                .int(id), .int(nextMs), .text(error))
        } else {
            try await executor.query(
                "UPDATE forward_outbox SET attempts = attempts + 1, failed_ms = $2, last_error = $3 WHERE id = $1", .int(id), .int(atMs), .text(error))
        }
    }

    /// A forwarder's messages, newest first: `(id, state, attempts, last error)`.
    func entries(forwarderID: Int64, limit: Int) async throws(StorageError) -> [(id: Int64, state: String, attempts: Int64, lastError: String)] {
        try await executor.query(
            """
            SELECT id, attempts, last_error, delivered_ms, failed_ms FROM forward_outbox WHERE forwarder_id = $1 ORDER BY id DESC LIMIT $2
            """,
            .int(forwarderID), .int(Int64(limit))
        ).map { row throws(StorageError) in
            let state = row.optionalInt("delivered_ms") != nil ? "delivered" : row.optionalInt("failed_ms") != nil ? "failed" : "pending"
            return (try row.int("id"), state, try row.int("attempts"), try row.text("last_error"))
        }
    }
}

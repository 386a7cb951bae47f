import TetherCloudProtocol
import TetherCore

/// The `messages` table: each user's message centre.
struct MessageStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    static let columns = "id, type, status, content, data, created_at, updated_at"

    static func body(_ row: SQLRow) throws(StorageError) -> MessageBody {
        MessageBody(
            id: try row.int("id"), type: try row.int("type"), status: MessageBody.Status(rawValue: try row.int("status")) ?? .deleted,
            content: try row.text("content"), data: (try? JSONValue.parse(try row.text("data"))) ?? .object([:]), createdAt: try row.int("created_at"),
            updatedAt: try row.int("updated_at"))
    }

    func insert(uid: String, type: Int64, content: String, data: JSONValue, now: Int64) async throws(StorageError) -> MessageBody {
        guard
            let row = try await executor.first(
                "INSERT INTO messages (uid, type, content, data, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING \(Self.columns)",
                .text(uid), .int(type), .text(content), .text(data.serialized()), .int(now))
        else { throw StorageError(.unexpectedValue, "the new message was not returned") }
        return try Self.body(row)
    }

    /// A user's messages that are not deleted, newest first; with their count.
    func list(uid: String, type: Int64?, limit: Int64, skip: Int64) async throws(StorageError) -> (messages: [MessageBody], total: Int64) {
        let filter = type == nil ? "" : " AND type = $4"
        var binds: [SQLValue] = [.text(uid), .int(limit), .int(skip)]
        if let type { binds.append(.int(type)) }
        let messages = try await executor.query(
            "SELECT \(Self.columns) FROM messages WHERE uid = $1 AND status <> 2\(filter) ORDER BY id DESC LIMIT $2 OFFSET $3", binds
        ).map { row throws(StorageError) in try Self.body(row) }
        let total =
            try await executor.query(
                "SELECT COUNT(*) AS total FROM messages WHERE uid = $1 AND status <> 2\(type == nil ? "" : " AND type = $2")",
                type.map { [.text(uid), .int($0)] } ?? [.text(uid)]
            ).first?.int("total") ?? 0
        return (messages, total)
    }

    /// The message's owner and status.
    func owner(of id: Int64) async throws(StorageError) -> (uid: String, status: MessageBody.Status)? {
        guard let row = try await executor.first("SELECT uid, status FROM messages WHERE id = $1", .int(id)) else { return nil }
        return (try row.text("uid"), MessageBody.Status(rawValue: try row.int("status")) ?? .deleted)
    }

    func setStatus(_ id: Int64, _ status: MessageBody.Status, now: Int64) async throws(StorageError) {
        try await executor.query("UPDATE messages SET status = $2, updated_at = $3 WHERE id = $1", .int(id), .int(status.rawValue), .int(now))
    }
}

import TetherCloudProtocol
import TetherCore

/// The `device_groups` and `device_group_members` tables.
struct GroupStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    private static let columns = "g.id, g.name, g.product_key, COALESCE(p.name, '') AS product_name, g.created_at, g.updated_at"

    private static func group(_ row: SQLRow) throws(StorageError) -> GroupBody {
        GroupBody(
            id: try row.text("id"), name: try row.text("name"), productKey: try row.text("product_key"), productName: try row.text("product_name"),
            createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }

    /// The user's groups, the user's row locked first (on PostgreSQL) so that two requests
    /// counting at once cannot both pass a limit: call on a transaction.
    func count(uid: String) async throws(StorageError) -> Int64 {
        try await UserStore(executor).lockForCounting(uid: uid)
        return try await executor.first("SELECT COUNT(*) AS n FROM device_groups WHERE uid = $1", .text(uid))?.int("n") ?? 0
    }

    func insert(id: String, uid: String, _ fields: GroupFieldsBody, now: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO device_groups (id, uid, name, product_key, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
            .text(id), .text(uid), .text(fields.name), .text(fields.productKey ?? ""), .int(now))
    }

    func list(uid: String) async throws(StorageError) -> [GroupBody] {
        try await executor.query(
            "SELECT \(Self.columns) FROM device_groups g LEFT JOIN products p ON p.product_key = g.product_key WHERE g.uid = $1 ORDER BY g.created_at, g.id",
            .text(uid)
        ).map(Self.group)
    }

    func find(id: String, uid: String) async throws(StorageError) -> GroupBody? {
        try await executor.first(
            "SELECT \(Self.columns) FROM device_groups g LEFT JOIN products p ON p.product_key = g.product_key WHERE g.id = $1 AND g.uid = $2",
            .text(id), .text(uid)
        ).map(Self.group)
    }

    func rename(id: String, uid: String, name: String, now: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE device_groups SET name = $3, updated_at = $4 WHERE id = $1 AND uid = $2 RETURNING id", .text(id), .text(uid), .text(name), .int(now)) != nil
    }

    /// Deletes the group and the schedules that write to it.
    func delete(id: String, uid: String) async throws(StorageError) -> Bool {
        guard try await executor.first("DELETE FROM device_groups WHERE id = $1 AND uid = $2 RETURNING id", .text(id), .text(uid)) != nil else {
            return false
        }
        try await executor.query("DELETE FROM schedules WHERE group_id = $1 AND uid = $2", .text(id), .text(uid))
        return true
    }

    /// The group's devices, in the order they were added.
    func members(groupID: String) async throws(StorageError) -> [GroupDeviceBody] {
        try await executor.query(
            """
            SELECT m.did, d.type, d.product_key, COALESCE(p.name, '') AS product_name, b.dev_alias
            FROM device_group_members m JOIN devices d ON d.did = m.did JOIN bindings b ON b.uid = m.uid AND b.did = m.did
            LEFT JOIN products p ON p.product_key = d.product_key
            WHERE m.group_id = $1 ORDER BY m.added_at, m.did
            """,
            .text(groupID)
        ).map { row throws(StorageError) in
            GroupDeviceBody(
                did: try row.text("did"), type: try row.text("type"), productName: try row.text("product_name"), alias: try row.text("dev_alias"),
                productKey: try row.text("product_key"))
        }
    }

    func memberCount(groupID: String) async throws(StorageError) -> Int64 {
        try await executor.first("SELECT COUNT(*) AS n FROM device_group_members WHERE group_id = $1", .text(groupID))?.int("n") ?? 0
    }

    /// Adds a device the user is bound to; true when it is in the group (already, or now).
    func add(groupID: String, uid: String, did: String, now: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO device_group_members (group_id, uid, did, added_at) VALUES ($1, $2, $3, $4) ON CONFLICT (group_id, did) DO NOTHING",
            .text(groupID), .text(uid), .text(did), .int(now))
    }

    /// False when the device was not in the group.
    func remove(groupID: String, did: String) async throws(StorageError) -> Bool {
        try await executor.first("DELETE FROM device_group_members WHERE group_id = $1 AND did = $2 RETURNING did", .text(groupID), .text(did)) != nil
    }
}

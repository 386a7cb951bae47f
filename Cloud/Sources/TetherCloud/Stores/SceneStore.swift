import TetherCloudProtocol
import TetherCore

/// The `scenes` table: a scene's tasks are kept as the JSON apps write them.
struct SceneStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    private static func scene(_ row: SQLRow) throws(StorageError) -> SceneBody {
        let text = try row.text("tasks")
        guard let json = try? JSONValue.parse(text), let items = json.arrayValue else { throw StorageError.unexpectedValue(column: "tasks") }
        var tasks: [SceneTaskBody] = []
        for item in items {
            guard let task = try? SceneTaskBody(json: item) else { throw StorageError.unexpectedValue(column: "tasks") }
            tasks.append(task)
        }
        return SceneBody(
            id: try row.text("id"), name: try row.text("name"), remark: try row.text("remark"), tasks: tasks, createdAt: try row.int("created_at"),
            updatedAt: try row.int("updated_at"))
    }

    private static func tasks(_ fields: SceneFieldsBody) -> SQLValue {
        .text(JSONValue.array(fields.tasks.map { $0.json(described: false) }).serialized())
    }

    /// The user's scenes, the user's row locked first: call on a transaction.
    func count(uid: String) async throws(StorageError) -> Int64 {
        try await UserStore(executor).lockForCounting(uid: uid)
        return try await executor.first("SELECT COUNT(*) AS n FROM scenes WHERE uid = $1", .text(uid))?.int("n") ?? 0
    }

    func insert(id: String, uid: String, _ fields: SceneFieldsBody, now: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO scenes (id, uid, name, remark, tasks, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
            .text(id), .text(uid), .text(fields.name), .text(fields.remark), Self.tasks(fields), .int(now))
    }

    func update(id: String, uid: String, _ fields: SceneFieldsBody, now: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            "UPDATE scenes SET name = $3, remark = $4, tasks = $5, updated_at = $6 WHERE id = $1 AND uid = $2 RETURNING id",
            .text(id), .text(uid), .text(fields.name), .text(fields.remark), Self.tasks(fields), .int(now)) != nil
    }

    func list(uid: String) async throws(StorageError) -> [SceneBody] {
        try await executor.query("SELECT * FROM scenes WHERE uid = $1 ORDER BY created_at, id", .text(uid)).map(Self.scene)
    }

    func find(id: String, uid: String) async throws(StorageError) -> SceneBody? {
        try await executor.first("SELECT * FROM scenes WHERE id = $1 AND uid = $2", .text(id), .text(uid)).map(Self.scene)
    }

    /// Deletes the scene, its runs (a run under way stops) and the schedules that start it.
    func delete(id: String, uid: String) async throws(StorageError) -> Bool {
        guard try await executor.first("DELETE FROM scenes WHERE id = $1 AND uid = $2 RETURNING id", .text(id), .text(uid)) != nil else { return false }
        try await executor.query("DELETE FROM schedules WHERE scene_id = $1 AND uid = $2", .text(id), .text(uid))
        return true
    }

    /// What a task's answer adds about its device as `uid` sees it: product, alias and remark.
    func deviceDescription(did: String, uid: String) async throws(StorageError) -> (productKey: String, productName: String, alias: String, remark: String)? {
        try await executor.first(
            """
            SELECT d.product_key, COALESCE(p.name, '') AS product_name, b.dev_alias, b.remark
            FROM bindings b JOIN devices d ON d.did = b.did LEFT JOIN products p ON p.product_key = d.product_key
            WHERE b.uid = $1 AND b.did = $2
            """,
            .text(uid), .text(did)
        ).map { row throws(StorageError) in
            (try row.text("product_key"), try row.text("product_name"), try row.text("dev_alias"), try row.text("remark"))
        }
    }
}

import TetherCore

/// The `cloud_nodes` table: each running node's heartbeat, by which the others tell a node
/// that stopped without saying so.
struct NodeStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    func heartbeat(_ node: String, atMs: Int64) async throws(StorageError) {
        try await executor.query(
            "INSERT INTO cloud_nodes (node_id, heartbeat_ms) VALUES ($1, $2) ON CONFLICT (node_id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms",
            .text(node), .int(atMs)
        )
    }

    func remove(_ node: String) async throws(StorageError) {
        try await executor.query("DELETE FROM cloud_nodes WHERE node_id = $1", .text(node))
    }
}

import TetherCore

/// Which node holds each device's connection. Every change is conditional on time, so that of
/// two nodes that saw a device, the later sighting wins whatever order the writes arrive in.
extension DeviceStore {
    /// Online on `node`, unless something newer was recorded. False when it was.
    func markOnline(_ did: String, node: String, atMs: Int64, remoteAddress: String) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            UPDATE devices SET is_online = 1, online_node = $2, online_changed_ms = $3, remote_address = $4,
                activated_ms = CASE WHEN activated_ms = 0 THEN $3 ELSE activated_ms END
            WHERE did = $1 AND online_changed_ms <= $3 RETURNING did
            """,
            .text(did), .text(node), .int(atMs), .text(remoteAddress)
        ) != nil
    }

    /// Offline, only if `node` still holds it and nothing newer happened: the device may
    /// already be online on another node. False when nothing changed.
    func markOffline(_ did: String, node: String, atMs: Int64) async throws(StorageError) -> Bool {
        try await executor.first(
            """
            UPDATE devices SET is_online = 0, online_changed_ms = $3
            WHERE did = $1 AND online_node = $2 AND is_online = 1 AND online_changed_ms <= $3 RETURNING did
            """,
            .text(did), .text(node), .int(atMs)
        ) != nil
    }

    /// Every device `node` held is offline (the node stops); their dids.
    func markOffline(heldBy node: String, atMs: Int64) async throws(StorageError) -> [String] {
        try await executor.query(
            "UPDATE devices SET is_online = 0, online_changed_ms = $2 WHERE is_online = 1 AND online_node = $1 RETURNING did",
            .text(node), .int(atMs)
        ).map { row throws(StorageError) in try row.text("did") }
    }

    /// Devices held by nodes whose last heartbeat is older than `aliveSinceMs` (they stopped
    /// without saying so) are offline; their dids.
    func markOfflineOnDeadNodes(atMs: Int64, aliveSinceMs: Int64) async throws(StorageError) -> [String] {
        try await executor.query(
            """
            UPDATE devices SET is_online = 0, online_changed_ms = $1
            WHERE is_online = 1 AND (online_node IS NULL OR online_node NOT IN
                (SELECT node_id FROM cloud_nodes WHERE heartbeat_ms >= $2))
            RETURNING did
            """,
            .int(atMs), .int(aliveSinceMs)
        ).map { row throws(StorageError) in try row.text("did") }
    }
}

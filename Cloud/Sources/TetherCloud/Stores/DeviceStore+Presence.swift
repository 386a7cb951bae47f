import TetherCore

/// Which node holds each device's connection. Every change is conditional on time, so that of
/// two nodes that saw a device, the later sighting wins whatever order the writes arrive in.
extension DeviceStore {
    /// Online on `node`, unless something newer was recorded. False when it was.
    func markOnline(_ did: String, node: String, atMs: Int64, remoteAddress: String) async throws(StorageError) -> Bool {
        try await markOnline([Sighting(did: did, atMs: atMs, remoteAddress: remoteAddress)], node: node).contains(did)
    }

    /// Offline, only if `node` still holds it and nothing newer happened: the device may
    /// already be online on another node. False when nothing changed.
    func markOffline(_ did: String, node: String, atMs: Int64) async throws(StorageError) -> Bool {
        try await markOffline([Sighting(did: did, atMs: atMs)], node: node).contains(did)
    }

    /// A device seen connecting or leaving at a moment.
    struct Sighting: Sendable {
        var did: String
        var atMs: Int64
        var remoteAddress = ""
    }

    /// ``markOnline(_:node:atMs:remoteAddress:)`` for many devices, a statement per few hundred
    /// (what a connect storm needs); each device at most once. The dids that changed.
    func markOnline(_ sightings: [Sighting], node: String, perStatement: Int = sightingsPerStatement) async throws(StorageError) -> Set<String> {
        var changed = Set<String>()
        for chunk in sightings.chunked(into: perStatement) {
            var binds: [SQLValue] = [.text(node)]
            var rows: [String] = []
            for sighting in chunk {
                rows.append("($\(binds.count + 1), $\(binds.count + 2), $\(binds.count + 3))")
                binds += [.text(sighting.did), .int(sighting.atMs), .text(sighting.remoteAddress)]
            }
            for row in try await executor.query(
                """
                WITH sighting (sighted_did, sighted_ms, sighted_address) AS (VALUES \(rows.joined(separator: ", ")))
                UPDATE devices SET is_online = 1, online_node = $1, online_changed_ms = sighted_ms, remote_address = sighted_address,
                    activated_ms = CASE WHEN activated_ms = 0 THEN sighted_ms ELSE activated_ms END
                FROM sighting WHERE did = sighted_did AND online_changed_ms <= sighted_ms RETURNING did
                """,
                binds
            ) {
                changed.insert(try row.text("did"))
            }
        }
        return changed
    }

    /// ``markOffline(_:node:atMs:)`` for many devices (each at most once): the dids that changed.
    func markOffline(_ sightings: [Sighting], node: String, perStatement: Int = sightingsPerStatement) async throws(StorageError) -> Set<String> {
        var changed = Set<String>()
        for chunk in sightings.chunked(into: perStatement) {
            var binds: [SQLValue] = [.text(node)]
            var rows: [String] = []
            for sighting in chunk {
                rows.append("($\(binds.count + 1), $\(binds.count + 2))")
                binds += [.text(sighting.did), .int(sighting.atMs)]
            }
            for row in try await executor.query(
                """
                WITH leaving (leaving_did, leaving_ms) AS (VALUES \(rows.joined(separator: ", ")))
                UPDATE devices SET is_online = 0, online_changed_ms = leaving_ms
                FROM leaving WHERE did = leaving_did AND online_node = $1 AND is_online = 1 AND online_changed_ms <= leaving_ms RETURNING did
                """,
                binds
            ) {
                changed.insert(try row.text("did"))
            }
        }
        return changed
    }

    static let sightingsPerStatement = 300

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

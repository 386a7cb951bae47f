import TetherCore

/// Which node holds each device's connection. A row describes one connection, named by its
/// start (`connection_started_ms`): a connection that started later wins whatever order two
/// nodes' writes arrive in, and a connection's end changes the row only while the row still
/// describes that connection.
extension DeviceStore {
    /// A device seen connecting (at `atMs`) or leaving (at `atMs`, ending the connection that
    /// started at `connectedAtMs`).
    struct Sighting: Sendable {
        var did: String
        var atMs: Int64
        var remoteAddress = ""
        /// For a leaving: when the connection it ends started. Nil when the node does not know
        /// (then any of the node's connections that started by `atMs` ends).
        var connectedAtMs: Int64?
    }

    /// Online on `node`, unless a later connection was recorded: a statement per few hundred
    /// devices (what a connect storm needs), each device at most once. The dids that changed.
    func markOnline(_ sightings: [Sighting], node: String, perStatement: Int = sightingsPerStatement) async throws(StorageError) -> Set<String> {
        try await eachChunk(of: sightings, node: node, perStatement: perStatement, values: { [.text($0.did), .int($0.atMs), .text($0.remoteAddress)] }) {
            """
            WITH sighting (sighted_did, sighted_ms, sighted_address) AS (VALUES \($0))
            UPDATE devices SET is_online = 1, online_node = $1, connection_started_ms = sighted_ms, remote_address = sighted_address,
                activated_ms = CASE WHEN activated_ms = 0 THEN sighted_ms ELSE activated_ms END
            FROM sighting WHERE did = sighted_did AND connection_started_ms <= sighted_ms RETURNING did
            """
        }
    }

    /// Offline, only where the row still describes the connection that ends (the device may
    /// already be online on another node); each device at most once. The dids that changed.
    func markOffline(_ sightings: [Sighting], node: String, perStatement: Int = sightingsPerStatement) async throws(StorageError) -> Set<String> {
        // An unknown start: any connection of the node's that started by the leaving.
        try await eachChunk(
            of: sightings, node: node, perStatement: perStatement,
            values: { [.text($0.did), .int($0.connectedAtMs ?? 0), .int($0.connectedAtMs ?? $0.atMs)] }
        ) {
            """
            WITH leaving (leaving_did, started_from, started_until) AS (VALUES \($0))
            UPDATE devices SET is_online = 0
            FROM leaving WHERE did = leaving_did AND online_node = $1 AND is_online = 1
                AND connection_started_ms >= started_from AND connection_started_ms <= started_until
            RETURNING did
            """
        }
    }

    /// Online again on `node`: devices whose connection there, started at `atMs`, was swept
    /// offline while `node` looked dead, and that have not connected anywhere since. The dids
    /// that changed.
    func reclaim(_ sightings: [Sighting], node: String, perStatement: Int = sightingsPerStatement) async throws(StorageError) -> Set<String> {
        try await eachChunk(of: sightings, node: node, perStatement: perStatement, values: { [.text($0.did), .int($0.atMs)] }) {
            """
            WITH held (held_did, held_ms) AS (VALUES \($0))
            UPDATE devices SET is_online = 1, online_node = $1
            FROM held WHERE did = held_did AND is_online = 0 AND online_node IS NULL AND connection_started_ms = held_ms
            RETURNING did
            """
        }
    }

    /// Runs `statement`, given the `(VALUES …)` rows of a chunk, once per chunk of `sightings`:
    /// `$1` is `node`, and each sighting's row binds `values(sighting)`. The dids it returned.
    private func eachChunk(
        of sightings: [Sighting], node: String, perStatement: Int, values: (Sighting) -> [SQLValue], statement: (String) -> String
    ) async throws(StorageError) -> Set<String> {
        var changed = Set<String>()
        for chunk in sightings.chunked(into: perStatement) {
            var binds: [SQLValue] = [.text(node)]
            var rows: [String] = []
            for sighting in chunk {
                let row = values(sighting)
                rows.append("(" + (binds.count + 1..<binds.count + 1 + row.count).map { "$\($0)" }.joined(separator: ", ") + ")")
                binds += row
            }
            for row in try await executor.query(statement(rows.joined(separator: ", ")), binds) {
                changed.insert(try row.text("did"))
            }
        }
        return changed
    }

    static let sightingsPerStatement = 300

    /// Every device `node` held is offline (the node stops); their dids.
    func markOffline(heldBy node: String) async throws(StorageError) -> [String] {
        try await executor.query(
            "UPDATE devices SET is_online = 0 WHERE is_online = 1 AND online_node = $1 RETURNING did",
            .text(node)
        ).map { row throws(StorageError) in try row.text("did") }
    }

    /// Devices held by nodes whose last heartbeat is older than `aliveSinceMs` (they stopped
    /// without saying so) are offline and held by nobody; their dids. The rows keep their
    /// connections' starts, so that a node that was alive after all can take its own back
    /// (``reclaim(_:node:perStatement:)``).
    func markOfflineOnDeadNodes(aliveSinceMs: Int64) async throws(StorageError) -> [String] {
        try await executor.query(
            """
            UPDATE devices SET is_online = 0, online_node = NULL
            WHERE is_online = 1 AND (online_node IS NULL OR online_node NOT IN
                (SELECT node_id FROM cloud_nodes WHERE heartbeat_ms >= $1))
            RETURNING did
            """,
            .int(aliveSinceMs)
        ).map { row throws(StorageError) in try row.text("did") }
    }
}

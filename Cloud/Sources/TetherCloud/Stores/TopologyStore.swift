import TetherCore

/// The `device_topology` table: which gateway each sub-device belongs to.
struct TopologyStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// Attaches `sub` to `gateway` (moving it from any other gateway).
    func attach(_ sub: String, to gateway: String, atMs: Int64) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO device_topology (sub_did, gateway_did, created_ms) VALUES ($1, $2, $3)
            ON CONFLICT (sub_did) DO UPDATE SET gateway_did = excluded.gateway_did, created_ms = excluded.created_ms
            """,
            .text(sub), .text(gateway), .int(atMs))
    }

    /// Detaches `sub` if it belongs to `gateway`; whether it did.
    func detach(_ sub: String, from gateway: String) async throws(StorageError) -> Bool {
        try await executor.first("DELETE FROM device_topology WHERE sub_did = $1 AND gateway_did = $2 RETURNING sub_did", .text(sub), .text(gateway)) != nil
    }

    /// The gateway `sub` belongs to.
    func gateway(of sub: String) async throws(StorageError) -> String? {
        try await executor.first("SELECT gateway_did FROM device_topology WHERE sub_did = $1", .text(sub)).map { row throws(StorageError) in
            try row.text("gateway_did")
        }
    }

    /// A gateway's sub-devices, as Alink names them.
    func subDevices(of gateway: String) async throws(StorageError) -> [(did: String, productKey: String, deviceName: String)] {
        try await executor.query(
            """
            SELECT d.did, d.product_key, d.device_name FROM device_topology t JOIN devices d ON d.did = t.sub_did
            WHERE t.gateway_did = $1 ORDER BY d.product_key, d.device_name
            """,
            .text(gateway)
        ).map { row throws(StorageError) in (try row.text("did"), try row.text("product_key"), try row.text("device_name")) }
    }
}

import TetherCloudProtocol

/// The `tuya_local_keys` table: a device's Tuya id, version and local key.
struct TuyaKeyStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    /// Sets (or replaces) the device's key.
    func set(did: String, _ key: TuyaLocalKeyBody, at time: Int64) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO tuya_local_keys (did, tuya_id, local_key, version, updated_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (did) DO UPDATE SET tuya_id = excluded.tuya_id, local_key = excluded.local_key, version = excluded.version,
                updated_at = excluded.updated_at
            """,
            .text(did), .text(key.tuyaID), .text(key.localKey), .text(key.version), .int(time))
    }

    func key(did: String) async throws(StorageError) -> TuyaLocalKeyBody? {
        guard let row = try await executor.first("SELECT tuya_id, local_key, version FROM tuya_local_keys WHERE did = $1", .text(did)) else { return nil }
        return TuyaLocalKeyBody(tuyaID: try row.text("tuya_id"), localKey: try row.text("local_key"), version: try row.text("version"))
    }
}

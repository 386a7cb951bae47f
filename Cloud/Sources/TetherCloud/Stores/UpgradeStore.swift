import TetherCore

/// The `device_firmware` and `upgrade_jobs` tables, and the command ledger's upgrades: what
/// each device's modules run, the jobs that offered a package to many devices, and the
/// upgrades (`kind = 'ota'`) not yet finished.
struct UpgradeStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    struct ModuleVersion: Sendable, Equatable {
        var module: String
        var version: String
        var updatedMs: Int64
    }

    /// Records the version a device's module reports.
    func setVersion(did: String, module: String, version: String, atMs: Int64) async throws(StorageError) {
        try await executor.query(
            """
            INSERT INTO device_firmware (did, module, version, updated_ms) VALUES ($1, $2, $3, $4)
            ON CONFLICT (did, module) DO UPDATE SET version = excluded.version, updated_ms = excluded.updated_ms
            """,
            .text(did), .text(module), .text(version), .int(atMs))
    }

    func versions(did: String) async throws(StorageError) -> [ModuleVersion] {
        try await executor.query("SELECT module, version, updated_ms FROM device_firmware WHERE did = $1 ORDER BY module", .text(did)).map {
            row throws(StorageError) in ModuleVersion(module: try row.text("module"), version: try row.text("version"), updatedMs: try row.int("updated_ms"))
        }
    }

    /// What each of a product's devices runs in `module`: did → version (devices that never
    /// reported are absent).
    func versions(productKey: String, module: String) async throws(StorageError) -> [String: String] {
        var versions: [String: String] = [:]
        for row in try await executor.query(
            "SELECT f.did, f.version FROM device_firmware f JOIN devices d ON d.did = f.did WHERE d.product_key = $1 AND f.module = $2",
            .text(productKey), .text(module))
        {
            versions[try row.text("did")] = try row.text("version")
        }
        return versions
    }

    /// A device's upgrades that have not ended, oldest first.
    func unfinished(did: String) async throws(StorageError) -> [CommandRecord] {
        try await executor.query(
            "SELECT \(CommandRecord.columns) FROM commands WHERE did = $1 AND kind = 'ota' AND state IN ('queued', 'sent', 'acknowledged') ORDER BY id",
            .text(did)
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// Upgrades still queued for the devices connected to node `nodeID`: offered by an
    /// administrator's job from another process, or while the bus was down.
    func queued(onNode nodeID: String, now: Int64, limit: Int) async throws(StorageError) -> [CommandRecord] {
        try await executor.query(
            """
            SELECT \(CommandRecord.columns.split(separator: ", ").map { "c.\($0)" }.joined(separator: ", "))
            FROM commands c JOIN devices d ON d.did = c.did
            WHERE c.state = 'queued' AND c.kind = 'ota' AND c.queue_until_ms > $2 AND d.is_online = 1 AND d.online_node = $1
            ORDER BY c.id LIMIT $3
            """,
            .text(nodeID), .int(now), .int(Int64(limit))
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    /// The devices of a product that have an upgrade of any module under way.
    func devicesUpgrading(productKey: String) async throws(StorageError) -> [String: [CommandRecord]] {
        var upgrading: [String: [CommandRecord]] = [:]
        for row in try await executor.query(
            """
            SELECT \(CommandRecord.columns.split(separator: ", ").map { "c.\($0)" }.joined(separator: ", "))
            FROM commands c JOIN devices d ON d.did = c.did
            WHERE d.product_key = $1 AND c.kind = 'ota' AND c.state IN ('queued', 'sent', 'acknowledged')
            """,
            .text(productKey))
        {
            let record = try CommandRecord(row: row)
            upgrading[record.did, default: []].append(record)
        }
        return upgrading
    }

    /// A device's upgrades, newest first.
    func upgrades(did: String, limit: Int) async throws(StorageError) -> [CommandRecord] {
        try await executor.query(
            "SELECT \(CommandRecord.columns) FROM commands WHERE did = $1 AND kind = 'ota' ORDER BY id DESC LIMIT $2", .text(did), .int(Int64(limit))
        ).map { row throws(StorageError) in try CommandRecord(row: row) }
    }

    func insertJob(firmwareID: Int64, productKey: String, atMs: Int64, deadlineMs: Int64) async throws(StorageError) -> Int64 {
        guard
            let row = try await executor.first(
                "INSERT INTO upgrade_jobs (firmware_id, product_key, created_ms, deadline_ms) VALUES ($1, $2, $3, $4) RETURNING id",
                .int(firmwareID), .text(productKey), .int(atMs), .int(deadlineMs))
        else { throw StorageError(.unexpectedValue, "the new upgrade job was not returned") }
        return try row.int("id")
    }

    /// A job's upgrades, by device.
    func commands(job: Int64) async throws(StorageError) -> [CommandRecord] {
        try await executor.query("SELECT \(CommandRecord.columns) FROM commands WHERE job_id = $1 ORDER BY did", .int(job)).map {
            row throws(StorageError) in try CommandRecord(row: row)
        }
    }

    func jobExists(_ id: Int64) async throws(StorageError) -> Bool {
        try await executor.first("SELECT id FROM upgrade_jobs WHERE id = $1", .int(id)) != nil
    }

    /// The dids of a product's devices.
    func devices(productKey: String) async throws(StorageError) -> [String] {
        try await executor.query("SELECT did FROM devices WHERE product_key = $1 ORDER BY did", .text(productKey)).map { row throws(StorageError) in
            try row.text("did")
        }
    }
}

import TetherCore

/// The `firmware` and `firmware_chunks` tables: packages and their bytes in fixed-size chunks.
struct FirmwareStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    struct NewPackage: Sendable {
        var productKey: String
        var module: String
        var version: String
        var sha256: String
        var md5: String
        var chunkSize: Int
    }

    /// Stores a package and its bytes; call inside a transaction. Throws `uniqueViolation` when
    /// the product's module already has that version.
    func insert(_ package: NewPackage, bytes: [UInt8], now: Int64) async throws(StorageError) -> FirmwareRecord {
        guard
            let row = try await executor.first(
                """
                INSERT INTO firmware (product_key, module, version, size, chunk_size, sha256, md5, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING \(FirmwareRecord.columns)
                """,
                .text(package.productKey), .text(package.module), .text(package.version), .int(Int64(bytes.count)), .int(Int64(package.chunkSize)),
                .text(package.sha256), .text(package.md5), .int(now))
        else { throw StorageError(.unexpectedValue, "the new firmware package was not returned") }
        let record = try FirmwareRecord(row: row)
        for (index, start) in stride(from: 0, to: bytes.count, by: package.chunkSize).enumerated() {
            let chunk = Array(bytes[start..<min(start + package.chunkSize, bytes.count)])
            try await executor.query(
                "INSERT INTO firmware_chunks (firmware_id, chunk_index, data) VALUES ($1, $2, $3)", .int(record.id), .int(Int64(index)), .blob(chunk))
        }
        return record
    }

    func find(_ id: Int64) async throws(StorageError) -> FirmwareRecord? {
        try await executor.first("SELECT \(FirmwareRecord.columns) FROM firmware WHERE id = $1", .int(id)).map { row throws(StorageError) in
            try FirmwareRecord(row: row)
        }
    }

    func list(productKey: String) async throws(StorageError) -> [FirmwareRecord] {
        try await executor.query("SELECT \(FirmwareRecord.columns) FROM firmware WHERE product_key = $1 ORDER BY id", .text(productKey)).map {
            row throws(StorageError) in try FirmwareRecord(row: row)
        }
    }

    /// The chunks `first...last` of a package, in order.
    func chunks(of id: Int64, from first: Int64, through last: Int64) async throws(StorageError) -> [[UInt8]] {
        try await executor.query(
            "SELECT data FROM firmware_chunks WHERE firmware_id = $1 AND chunk_index >= $2 AND chunk_index <= $3 ORDER BY chunk_index",
            .int(id), .int(first), .int(last)
        ).map { row throws(StorageError) in try row.blob("data") }
    }
}

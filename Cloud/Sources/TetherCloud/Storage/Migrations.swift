public import Logging

/// Versioned schema changes, applied in order at start. A migration is never edited once
/// released: a change to the schema is a new migration at the end of the list.
public enum Migrations {
    struct Migration: Sendable {
        let version: Int64
        let name: String
        let statements: @Sendable (SQLDialect) -> [String]
    }

    static let all: [Migration] = [
        Migration(version: 1, name: "accounts, products, devices, bindings", statements: Schema.version1),
        Migration(version: 2, name: "presence, status, device log, command ledger", statements: Schema.version2),
        Migration(version: 3, name: "rate limits, signed registration, account locks, sessions", statements: Schema.version3),
        Migration(version: 4, name: "IoT tokens for account/bind", statements: Schema.version4),
        Migration(version: 5, name: "whitelist-free registration and device tokens", statements: Schema.version5),
        Migration(version: 6, name: "device shadows", statements: Schema.version6),
        Migration(version: 7, name: "custom topic classes", statements: Schema.version7),
        Migration(version: 8, name: "firmware packages and settings", statements: Schema.version8),
        Migration(version: 9, name: "firmware upgrades", statements: Schema.version9),
        Migration(version: 10, name: "gateway topology", statements: Schema.version10),
        Migration(version: 11, name: "data forwarding", statements: Schema.version11),
        Migration(version: 12, name: "sharing and the message centre", statements: Schema.version12),
        Migration(version: 13, name: "homes, rooms and members", statements: Schema.version13),
        Migration(version: 14, name: "Tuya local keys", statements: Schema.version14),
        Migration(version: 15, name: "pairing tokens", statements: Schema.version15),
        Migration(version: 16, name: "schedules and their runs", statements: Schema.version16),
        Migration(version: 17, name: "groups of devices", statements: Schema.version17),
        Migration(version: 18, name: "scenes and automation runs", statements: Schema.version18),
        Migration(version: 19, name: "linkage rules and their events", statements: Schema.version19),
        Migration(version: 20, name: "presence by connection", statements: Schema.version20),
    ]

    /// The newest schema version this build knows.
    public static var latestVersion: Int64 { all.last?.version ?? 0 }

    public static func run(on database: any SQLDatabase, logger: Logger) async throws(StorageError) {
        try await database.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
            """)
        let applied = Set(try await database.query("SELECT version FROM schema_migrations").map { row throws(StorageError) in try row.int("version") })
        if let newest = applied.max(), newest > latestVersion {
            throw StorageError(.migrationFailed, "the database has schema version \(newest), newer than this build's \(latestVersion)")
        }
        for migration in all where !applied.contains(migration.version) {
            logger.info("applying migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            do {
                try await database.transaction { transaction in
                    for statement in migration.statements(transaction.dialect) {
                        try await transaction.query(statement)
                    }
                    try await transaction.query(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                        .int(migration.version), .text(migration.name), .int(Clock.unixNow())
                    )
                }
            } catch let error as StorageError {
                throw StorageError(.migrationFailed, "migration \(migration.version) (\(migration.name)): \(error.message)")
            } catch {
                throw StorageError(.migrationFailed, "migration \(migration.version) (\(migration.name)): \(error)")
            }
        }
    }
}

import Foundation
import Testing
@testable import TetherCloud

@Suite("Storage engines")
struct StorageTests {
    @Test("migrations run once and leave the schema at the latest version", arguments: TestEngine.allCases)
    func migrationsAreIdempotent(engine: TestEngine) async throws {
        try await engine.withFreshDatabase { url in
            let first = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            await first.close()
            let second = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let versions = try await second.query("SELECT version FROM schema_migrations ORDER BY version")
            #expect(try versions.map { try $0.int("version") } == Array(1...Migrations.latestVersion))
            await second.close()
        }
    }

    @Test("a database newer than the build is refused", arguments: TestEngine.allCases)
    func newerSchemaIsRefused(engine: TestEngine) async throws {
        try await engine.withFreshDatabase { url in
            let database = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            try await database.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)", .int(Migrations.latestVersion + 1))
            await database.close()
            await #expect {
                _ = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            } throws: { error in
                (error as? StorageError)?.kind == .migrationFailed
            }
        }
    }

    @Test("values round-trip and unique violations are typed", arguments: TestEngine.allCases)
    func valuesAndConstraints(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            try await database.query(
                "INSERT INTO apps (app_id, name, secret, jwks_url, created_at) VALUES ($1, $2, $3, $4, $5)",
                "a1", "name with 'quote' and ünïcode", "s", .null, .int(Int64.max)
            )
            let row = try #require(try await database.first("SELECT * FROM apps WHERE app_id = $1", "a1"))
            #expect(try row.text("name") == "name with 'quote' and ünïcode")
            #expect(try row.int("created_at") == Int64.max)
            #expect(row["jwks_url"] == .null)
            await #expect {
                try await database.query("INSERT INTO apps (app_id, name, secret, created_at) VALUES ($1, 'x', 's', 0)", "a1")
            } throws: { error in
                (error as? StorageError)?.kind == .uniqueViolation
            }
        }
    }

    @Test("a transaction that throws leaves nothing behind", arguments: TestEngine.allCases)
    func transactionRollsBack(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            await #expect(throws: TestFailure.self) {
                try await database.transaction { transaction in
                    try await transaction.query("INSERT INTO apps (app_id, name, secret, created_at) VALUES ('t1', 'x', 's', 0)")
                    throw TestFailure("abort")
                }
            }
            #expect(try await database.query("SELECT app_id FROM apps").isEmpty)
            try await database.transaction { transaction in
                try await transaction.query("INSERT INTO apps (app_id, name, secret, created_at) VALUES ('t2', 'x', 's', 0)")
            }
            #expect(try await database.query("SELECT app_id FROM apps").count == 1)
        }
    }

    @Test("concurrent transactions do not interleave", arguments: TestEngine.allCases)
    func concurrentTransactions(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            try await database.query("INSERT INTO apps (app_id, name, secret, created_at) VALUES ('counter', 'x', 's', 0)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await database.transaction { transaction in
                            let lock = transaction.dialect == .postgres ? " FOR UPDATE" : ""
                            let row = try #require(try await transaction.first("SELECT created_at FROM apps WHERE app_id = 'counter'\(lock)"))
                            let value = try row.int("created_at")
                            try await transaction.query("UPDATE apps SET created_at = $1 WHERE app_id = 'counter'", .int(value + 1))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let row = try #require(try await database.first("SELECT created_at FROM apps WHERE app_id = 'counter'"))
            #expect(try row.int("created_at") == 20)
        }
    }

    @Test("a SQLite URL's synchronous= sets when a commit is on disk: full unless normal is asked for", arguments: SQLiteSynchronous.allCases)
    func sqliteSynchronous(synchronous: SQLiteSynchronous) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cloud-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await DatabaseURL("sqlite:\(directory.path)/s.sqlite?synchronous=\(synchronous.rawValue)").open(logger: TestEngine.logger)
        // SQLite's numbers: 1 NORMAL, 2 FULL.
        let level = try #require(try await database.first("PRAGMA synchronous")).int("synchronous")
        #expect(level == (synchronous == .full ? 2 : 1))
        #expect(try #require(try await database.first("PRAGMA journal_mode")).text("journal_mode") == "wal")
        await database.close()
    }

    @Test("the SQLite checkpointer copies the log into the database file from its own connection, and hands checkpoints back to commits when it stops")
    func sqliteCheckpointer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cloud-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = "\(directory.path)/c.sqlite"
        let database = try await DatabaseURL("sqlite:\(path)").open(logger: TestEngine.logger)
        let sqlite = try #require(database as? SQLiteEngine)
        try await database.query("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        func autocheckpoint() async throws -> Int64 { try #require(try await database.first("PRAGMA wal_autocheckpoint")).int("wal_autocheckpoint") }
        func fileSize() throws -> Int { (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        #expect(try await autocheckpoint() == 1_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await SQLiteCheckpointer(engine: sqlite, interval: .milliseconds(20), logger: TestEngine.logger).run() }
            try await GatewayFixtures.waitUntil("the engine leaves checkpoints to the checkpointer") { try await autocheckpoint() == 0 }
            let before = try fileSize()
            // About 600 log pages, under the 1,000 at which a commit of the engine would
            // checkpoint: only the checkpointer moves them into the file.
            for _ in 0..<300 {
                try await database.query("INSERT INTO blobs (body) VALUES ($1)", .text(String(repeating: "x", count: 3_000)))
            }
            try await GatewayFixtures.waitUntil("the rows are in the database file") { try fileSize() >= before + 800_000 }
            group.cancelAll()
        }
        #expect(try await autocheckpoint() == 1_000)
        #expect(try #require(try await database.first("SELECT COUNT(*) AS n FROM blobs")).int("n") == 300)
        #expect(SQLiteCheckpointer.applies(to: path))
        #expect(!SQLiteCheckpointer.applies(to: ":memory:") && !SQLiteCheckpointer.applies(to: "file:x?mode=memory"))
        await database.close()
    }

    @Test("a SQLite transaction whose task is cancelled is rolled back, and the next one begins")
    func sqliteCancelledTransaction() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cloud-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await DatabaseURL("sqlite:\(directory.path)/t.sqlite").open(logger: TestEngine.logger)
        try await database.query("CREATE TABLE marks (id INTEGER PRIMARY KEY)")
        let started = AsyncStream<Void>.makeStream()
        let cancelled = Task {
            try await database.transaction { transaction in
                try await transaction.query("INSERT INTO marks (id) VALUES (1)")
                started.continuation.yield()
                try await Task.sleep(for: .seconds(60))
            }
        }
        for await _ in started.stream { break }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        try await database.transaction { transaction in try await transaction.query("INSERT INTO marks (id) VALUES (2)") }
        #expect(try await database.query("SELECT id FROM marks").map { try $0.int("id") } == [2])
        await database.close()
    }

    @Test("database URLs parse, and passwords stay out of descriptions")
    func databaseURLs() throws {
        #expect(try DatabaseURL("sqlite:data/x.sqlite") == .sqlite(path: "data/x.sqlite"))
        #expect(try DatabaseURL("sqlite:data/x.sqlite?synchronous=normal") == .sqlite(path: "data/x.sqlite", synchronous: .normal))
        #expect(try DatabaseURL("sqlite:data/x.sqlite?synchronous=full") == .sqlite(path: "data/x.sqlite", synchronous: .full))
        #expect(try DatabaseURL("sqlite:data/why?.sqlite") == .sqlite(path: "data/why?.sqlite"))
        #expect(try DatabaseURL("sqlite:x.sqlite?synchronous=normal").description == "sqlite:x.sqlite?synchronous=normal")
        #expect(throws: StorageError.self) { try DatabaseURL("sqlite:x.sqlite?synchronous=off") }
        #expect(throws: StorageError.self) { try DatabaseURL("sqlite:?synchronous=normal") }
        let url = try DatabaseURL("postgres://tether:s3cret@db.example:6543/cloud")
        #expect(url == .postgres(host: "db.example", port: 6543, username: "tether", password: "s3cret", database: "cloud", requireTLS: false))
        #expect(!url.description.contains("s3cret"))
        #expect(throws: StorageError.self) { try DatabaseURL("mysql://x/y") }
        #expect(throws: StorageError.self) { try DatabaseURL("postgres://host") }
        #expect(throws: StorageError.self) { try DatabaseURL("sqlite:") }
    }

    @Test("SQLite gets $N placeholders as ?N, or as plain ? when they run in order each once")
    func placeholderTranslation() {
        #expect(SQLiteEngine.sqliteSQL("SELECT $1, $12 WHERE a = '$'") == "SELECT ?1, ?12 WHERE a = '$'")
        #expect(SQLiteEngine.sqliteSQL("SELECT $2, $1") == "SELECT ?2, ?1")
        #expect(SQLiteEngine.sqliteSQL("UPDATE t SET a = $1, b = $2 WHERE c = $1") == "UPDATE t SET a = ?1, b = ?2 WHERE c = ?1")
        // In order, each once: plain placeholders, which SQLite prepares without looking names up.
        #expect(SQLiteEngine.sqliteSQL("INSERT INTO t VALUES ($1, $2), ($3, $4)") == "INSERT INTO t VALUES (?, ?), (?, ?)")
        #expect(SQLiteEngine.sqliteSQL("SELECT 'ü$', $1 || '$'") == "SELECT 'ü$', ? || '$'")
        #expect(SQLiteEngine.sqliteSQL("SELECT 1") == "SELECT 1")
        #expect(SQLiteEngine.sqliteSQL("SELECT $99999999999999999999") == "SELECT ?99999999999999999999")
    }
}

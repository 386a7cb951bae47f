import Foundation
import Testing
@testable import TetherCloud

/// The SQLite engine's own behaviour: statements kept prepared, values that SQLite could take
/// for NULL, batches past the inline limit, and another connection holding the lock.
@Suite("SQLite engine")
struct SQLiteEngineTests {
    private static func withEngine(_ body: (SQLiteEngine, String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cloud-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = "\(directory.path)/e.sqlite"
        let engine = try await SQLiteEngine.open(path: path, logger: TestEngine.logger)
        do {
            try await body(engine, path)
        } catch {
            await engine.close()
            throw error
        }
        await engine.close()
    }

    @Test("a kept statement answers each run with its own values, also after one of its runs failed")
    func keptStatements() async throws {
        try await Self.withEngine { engine, _ in
            try await engine.query("CREATE TABLE items (id TEXT PRIMARY KEY, n BIGINT NOT NULL)")
            for index in 0..<20 {
                try await engine.query("INSERT INTO items (id, n) VALUES ($1, $2)", .text("i\(index)"), .int(Int64(index)))
            }
            await #expect {
                try await engine.query("INSERT INTO items (id, n) VALUES ($1, $2)", "i3", 99)
            } throws: { error in
                (error as? StorageError)?.kind == .uniqueViolation
            }
            for index in [7, 0, 19, 3] {
                let rows = try await engine.query("SELECT n FROM items WHERE id = $1", .text("i\(index)"))
                #expect(try rows.map { try $0.int("n") } == [Int64(index)])
            }
            #expect(try await engine.query("SELECT n FROM items WHERE id = $1", "missing").isEmpty)
            // The failed insert changed nothing, and its statement runs again.
            try await engine.query("INSERT INTO items (id, n) VALUES ($1, $2)", "i20", 20)
            #expect(try #require(try await engine.first("SELECT COUNT(*) AS n FROM items")).int("n") == 21)
        }
    }

    @Test("empty text and empty bytes stay empty, not NULL; NULL stays NULL")
    func emptyValues() async throws {
        try await Self.withEngine { engine, _ in
            try await engine.query("CREATE TABLE cells (id BIGINT PRIMARY KEY, t TEXT, b BLOB)")
            try await engine.query("INSERT INTO cells (id, t, b) VALUES (1, $1, $2)", .text(""), .blob([]))
            try await engine.query("INSERT INTO cells (id, t, b) VALUES (2, $1, $2)", .null, .null)
            try await engine.query("INSERT INTO cells (id, t, b) VALUES (3, $1, $2)", .text("ü\u{0}x"), .blob([0, 255, 0]))
            let rows = try await engine.query("SELECT t, b, t IS NULL AS t_null, b IS NULL AS b_null FROM cells ORDER BY id")
            #expect(rows[0]["t"] == .text("") && rows[0]["b"] == .blob([]))
            #expect(try rows[0].int("t_null") == 0 && rows[0].int("b_null") == 0)
            #expect(rows[1]["t"] == .null && rows[1]["b"] == .null)
            #expect(rows[2]["t"] == .text("ü\u{0}x") && rows[2]["b"] == .blob([0, 255, 0]))
        }
    }

    @Test("a kept SELECT * sees a column added after it was first run")
    func schemaChange() async throws {
        try await Self.withEngine { engine, _ in
            try await engine.query("CREATE TABLE things (id BIGINT PRIMARY KEY)")
            try await engine.query("INSERT INTO things (id) VALUES (1)")
            #expect(try await engine.query("SELECT * FROM things")[0].values.keys.sorted() == ["id"])
            try await engine.query("ALTER TABLE things ADD COLUMN label TEXT NOT NULL DEFAULT 'x'")
            let row = try await engine.query("SELECT * FROM things")[0]
            #expect(row.values.keys.sorted() == ["id", "label"])
            #expect(try row.text("label") == "x")
        }
    }

    @Test("more distinct statements than are kept, and batches past the inline limit, all answer")
    func manyStatementsAndBatches() async throws {
        try await Self.withEngine { engine, _ in
            try await engine.query("CREATE TABLE numbers (n BIGINT PRIMARY KEY)")
            let count = SQLiteHandle.cachedStatementLimit + 40
            for n in 0..<count {
                // A distinct text each time.
                try await engine.query("INSERT INTO numbers (n) VALUES (\(n))")
            }
            let batch = (0..<1_000).map { SQLValue.int(Int64(count + $0)) }
            try await engine.transaction { transaction in
                let placeholders = (1...batch.count).map { "($\($0))" }.joined(separator: ", ")
                try await transaction.query("INSERT INTO numbers (n) VALUES \(placeholders)", batch)
            }
            let placeholders = (1...batch.count).map { "$\($0)" }.joined(separator: ", ")
            let rows = try await engine.query("SELECT n FROM numbers WHERE n IN (\(placeholders)) ORDER BY n", batch)
            #expect(rows.count == 1_000)
            #expect(try #require(try await engine.first("SELECT COUNT(*) AS n FROM numbers")).int("n") == Int64(count + 1_000))
        }
    }

    @Test("more values than SQLite takes in one statement is a typed error, and the engine goes on")
    func tooManyValues() async throws {
        try await Self.withEngine { engine, path in
            let limit = try SQLiteHandle(path: path, busyTimeoutMilliseconds: 0).bindLimit + 1
            let binds = [SQLValue](repeating: .int(1), count: limit)
            await #expect {
                try await engine.query("SELECT 1 WHERE 1 IN (\((1...limit).map { "$\($0)" }.joined(separator: ",")))", binds)
            } throws: { error in
                (error as? StorageError)?.kind == .queryFailed
            }
            #expect(try #require(try await engine.first("SELECT 2 AS n")).int("n") == 2)
        }
    }

    @Test("a statement and a transaction wait for another connection's write lock instead of failing at once")
    func anotherConnectionWrites() async throws {
        try await Self.withEngine { engine, path in
            try await engine.query("CREATE TABLE marks (id BIGINT PRIMARY KEY)")
            let other = try SQLiteHandle(path: path, busyTimeoutMilliseconds: 1_000)
            defer { other.close() }
            try other.execute("BEGIN IMMEDIATE")
            try other.execute("INSERT INTO marks (id) VALUES (1)")
            let waiting = Task {
                try await engine.query("INSERT INTO marks (id) VALUES (2)")
                try await engine.transaction { transaction in _ = try await transaction.query("INSERT INTO marks (id) VALUES (3)") }
            }
            // Long enough for the engine to find the lock held.
            try await Task.sleep(for: .milliseconds(200))
            try other.execute("COMMIT")
            try await waiting.value
            #expect(try await engine.query("SELECT id FROM marks ORDER BY id").map { try $0.int("id") } == [1, 2, 3])
        }
    }

    @Test("a batch and a commit asked for by a cancelled task still run: what a stopping server records last is not dropped")
    func cancelledTask() async throws {
        try await Self.withEngine { engine, _ in
            try await engine.query("CREATE TABLE marks (id BIGINT PRIMARY KEY)")
            let values = (1...200).map { SQLValue.int(Int64($0)) }
            let placeholders = (1...values.count).map { "($\($0))" }.joined(separator: ", ")
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                // More values than run inline: the statement goes to the thread pool.
                _ = try await engine.query("INSERT INTO marks (id) VALUES \(placeholders)", values)
                try await engine.transaction { transaction in _ = try await transaction.query("INSERT INTO marks (id) VALUES (1000)") }
            }
            try await task.value
            #expect(try #require(try await engine.first("SELECT COUNT(*) AS n FROM marks")).int("n") == 201)
        }
    }

    @Test("rows keep their column order, answer by name, and a name given twice means its last column")
    func rows() throws {
        let row = SQLRow(columns: SQLColumns(names: ["a", "b", "a"]), cells: [.int(1), .text("x"), .int(3)])
        #expect(row["a"] == .int(3) && row["b"] == .text("x") && row["c"] == .null)
        #expect(row.values == ["a": .int(3), "b": .text("x")])
        let built = SQLRow(values: ["k": .double(1.5), "n": .null])
        #expect(built.optionalDouble("k") == 1.5 && built["n"] == .null && built.values.count == 2)
    }
}

import Foundation
public import Logging
import NIOCore
import SQLiteNIO

/// The default engine: one SQLite file, nothing to install.
///
/// SQLite allows one writer at a time, so the engine keeps one connection and runs statements
/// one after another; a transaction holds the connection until it ends.
public final class SQLiteEngine: SQLDatabase {
    public let dialect = SQLDialect.sqlite
    /// The database file.
    let path: String
    private let connection: SQLiteConnection
    private let lock = AsyncSerialLock()

    /// Log pages after which a commit checkpoints, when no ``SQLiteCheckpointer`` runs
    /// (SQLite's default).
    static let autocheckpointPages = 1_000

    /// How long a statement waits for another connection's lock (the checkpointer's, or a
    /// backup's) before it fails.
    static let busyTimeoutMilliseconds = 5_000

    private init(path: String, connection: SQLiteConnection) {
        self.path = path
        self.connection = connection
    }

    /// Opens (creating if needed) the database at `path`, and its parent directory.
    public static func open(path: String, synchronous: SQLiteSynchronous = .full, logger: Logger) async throws(StorageError) -> SQLiteEngine {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw StorageError(.connectionFailed, "cannot create \(directory): \(error)")
            }
        }
        do {
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            let engine = SQLiteEngine(path: path, connection: connection)
            try await engine.query("PRAGMA journal_mode = WAL")
            try await engine.query("PRAGMA synchronous = \(synchronous.rawValue.uppercased())")
            try await engine.query("PRAGMA foreign_keys = ON")
            try await engine.query("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
            return engine
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.connectionFailed, "cannot open SQLite database \(path): \(error)")
        }
    }

    public func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        do {
            return try await lock.withLock { try await self.run(sql, binds) }
        } catch {
            throw Self.storageError(error)
        }
    }

    public func transaction<Result: Sendable>(
        _ body: @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result {
        try await lock.withLock {
            try await self.control("BEGIN IMMEDIATE")
            let result: Result
            do {
                result = try await body(Transaction(engine: self))
                try await self.control("COMMIT")
            } catch {
                _ = try? await self.control("ROLLBACK")
                throw error
            }
            return result
        }
    }

    /// Sets how many log pages make a commit checkpoint (0: none do), also from a task that
    /// was cancelled.
    func setAutocheckpoint(pages: Int) async throws(StorageError) {
        do {
            try await lock.withLock { try await self.control("PRAGMA wal_autocheckpoint = \(pages)") }
        } catch {
            throw Self.storageError(error)
        }
    }

    /// Has SQLite start the write-ahead log over (`wal_checkpoint(RESTART)`) between two
    /// statements, waiting for other connections' readers at most `milliseconds`: here, not
    /// from another connection, whose wait would make this one's writers sleep in their busy
    /// handler for longer than it lasts.
    func restartLog(waitingAtMost milliseconds: Int) async throws(StorageError) {
        do {
            try await lock.withLock {
                try await self.control("PRAGMA busy_timeout = \(milliseconds)")
                do {
                    try await self.control("PRAGMA wal_checkpoint(RESTART)")
                } catch {
                    try? await self.control("PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)")
                    throw error
                }
                try await self.control("PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)")
            }
        } catch {
            throw Self.storageError(error)
        }
    }

    /// Runs a statement that must not be cut short by the caller's cancellation, as the
    /// statements of the async API are while they wait for a thread: a transaction left open
    /// fails every later BEGIN. The caller holds the lock.
    private func control(_ sql: String) async throws(StorageError) {
        do {
            _ = try await connection.query(sql, []).get()
        } catch {
            throw Self.storageError(error)
        }
    }

    /// Closes the connection, also from a task that was cancelled (a server stopping, a test
    /// past its time limit): the future-based close is not cut short by cancellation, and a
    /// connection left open traps when it is released.
    public func close() async {
        try? await connection.close().get()
    }

    /// Runs a statement without taking the lock: the caller holds it.
    @discardableResult
    fileprivate func run(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        do {
            let rows = try await connection.query(Self.sqliteSQL(sql), binds.map(Self.sqliteData))
            return rows.map { row in
                var values: [String: SQLValue] = [:]
                for column in row.columns {
                    values[column.name] = Self.value(column.data)
                }
                return SQLRow(values: values)
            }
        } catch {
            throw Self.storageError(error)
        }
    }

    /// `$N` placeholders become SQLite's numbered `?N`, so one statement serves both engines.
    static func sqliteSQL(_ sql: String) -> String {
        // Byte by byte: `$` and digits are ASCII, and every other byte passes through unchanged.
        var output = Array(sql.utf8)
        for index in output.indices.dropLast() where output[index] == UInt8(ascii: "$") {
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(output[index + 1]) { output[index] = UInt8(ascii: "?") }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func sqliteData(_ value: SQLValue) -> SQLiteData {
        switch value {
        case .int(let value): .integer(Int(value))
        case .double(let value): .float(value)
        case .text(let value): .text(value)
        case .blob(let bytes): .blob(ByteBuffer(bytes: bytes))
        case .null: .null
        }
    }

    private static func value(_ data: SQLiteData) -> SQLValue {
        switch data {
        case .integer(let value): .int(Int64(value))
        case .float(let value): .double(value)
        case .text(let value): .text(value)
        case .blob(let buffer): .blob(Array(buffer.readableBytesView))
        case .null: .null
        }
    }

    private static func storageError(_ error: any Error) -> StorageError {
        if let error = error as? StorageError { return error }
        let text = String(describing: error)
        if text.contains("UNIQUE constraint failed") || text.contains("PRIMARY KEY constraint") {
            return StorageError(.uniqueViolation, text)
        }
        return StorageError(.queryFailed, text)
    }

    private struct Transaction: SQLExecutor {
        let engine: SQLiteEngine
        var dialect: SQLDialect { .sqlite }

        func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
            try await engine.run(sql, binds)
        }
    }
}

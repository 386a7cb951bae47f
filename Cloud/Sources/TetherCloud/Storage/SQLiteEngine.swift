import Foundation
public import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The default engine: one SQLite file, nothing to install.
///
/// SQLite allows one writer at a time, so the engine keeps one connection and runs statements
/// one after another; a transaction holds the connection until it ends.
///
/// A statement runs on the thread of the task that asks for it: most take microseconds, less
/// than the two thread switches a trip to a thread pool costs. What may wait for the disk or
/// for another connection goes to `NIOThreadPool.singleton` instead, so that no task thread
/// blocks on it: a commit that syncs the log (`synchronous=full`) or may checkpoint it (when
/// no ``SQLiteCheckpointer`` runs), a statement with more than ``inlineBindLimit`` values (a
/// many-row batch), and a statement that found another connection holding the lock, which is
/// tried again there with the busy timeout.
public final class SQLiteEngine: SQLDatabase {
    public let dialect = SQLDialect.sqlite
    /// The database file.
    let path: String
    let synchronous: SQLiteSynchronous
    private let handle: SQLiteHandle
    private let lock = AsyncSerialLock()
    /// Whether a commit may checkpoint the log (SQLite's `wal_autocheckpoint` is on).
    private let commitsCheckpoint = Atomic<Bool>(true)

    /// Log pages after which a commit checkpoints, when no ``SQLiteCheckpointer`` runs
    /// (SQLite's default).
    static let autocheckpointPages = 1_000

    /// How long a statement waits for another connection's lock (the checkpointer's, or a
    /// backup's) before it fails.
    static let busyTimeoutMilliseconds = 5_000

    /// Statements with more values than this run on the thread pool.
    static let inlineBindLimit = 64

    private init(path: String, synchronous: SQLiteSynchronous, handle: SQLiteHandle) {
        self.path = path
        self.synchronous = synchronous
        self.handle = handle
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
        let handle = try await onThreadPool { () throws(StorageError) in
            let handle = try SQLiteHandle(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            do throws(SQLiteHandle.Failure) {
                try handle.execute("PRAGMA journal_mode = WAL")
                try handle.execute("PRAGMA synchronous = \(synchronous.rawValue.uppercased())")
                try handle.execute("PRAGMA foreign_keys = ON")
            } catch {
                handle.close()
                throw StorageError(.connectionFailed, "cannot open SQLite database \(path): \(error.error.message)")
            }
            return handle
        }
        return SQLiteEngine(path: path, synchronous: synchronous, handle: handle)
    }

    public func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        try await locked { () async throws(StorageError) in try await self.runAlone(sql, binds) }
    }

    public func transaction<Result: Sendable>(
        _ body: @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result {
        await lock.acquire()
        defer { lock.release() }
        try await begin()
        let result: Result
        do {
            result = try await body(Transaction(engine: self))
            try await commit()
        } catch {
            // A failed commit may have ended the transaction already.
            if handle.inTransaction { _ = try? handle.execute("ROLLBACK") }
            throw error
        }
        return result
    }

    /// Sets how many log pages make a commit checkpoint (0: none do).
    func setAutocheckpoint(pages: Int) async throws(StorageError) {
        try await locked { () throws(StorageError) in
            do throws(SQLiteHandle.Failure) {
                try self.handle.execute("PRAGMA wal_autocheckpoint = \(pages)")
            } catch {
                throw error.error
            }
            self.commitsCheckpoint.store(pages > 0, ordering: .relaxed)
        }
    }

    /// Has SQLite start the write-ahead log over (`wal_checkpoint(RESTART)`) between two
    /// statements, waiting for other connections' readers at most `milliseconds`: here, not
    /// from another connection, whose wait would make this one's writers sleep in their busy
    /// handler for longer than it lasts.
    func restartLog(waitingAtMost milliseconds: Int) async throws(StorageError) {
        try await locked { () async throws(StorageError) in
            let handle = self.handle
            try await Self.onThreadPool { () throws(StorageError) in
                handle.busyTimeoutMilliseconds = milliseconds
                defer { handle.busyTimeoutMilliseconds = Self.busyTimeoutMilliseconds }
                do throws(SQLiteHandle.Failure) {
                    try handle.execute("PRAGMA wal_checkpoint(RESTART)")
                } catch {
                    throw error.error
                }
            }
        }
    }

    /// Closes the connection once the statement or transaction running ends.
    public func close() async {
        await lock.acquire()
        defer { lock.release() }
        handle.close()
    }

    /// `$N` placeholders become SQLite's: plain `?` when they run `$1`, `$2`, … in order, each
    /// once (every many-row batch), numbered `?N` otherwise, so that one statement serves both
    /// engines. SQLite looks a numbered parameter's name up in a list when it generates code,
    /// which made a batch of 3,600 values take 20 ms to prepare instead of 1.3.
    static func sqliteSQL(_ sql: String) -> String {
        // Byte by byte: `$` and digits are ASCII, and every other byte passes through unchanged.
        let input = Array(sql.utf8)
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        var placeholders: [Range<Int>] = []
        var inOrder = true
        var index = 0
        while index < input.count {
            guard input[index] == UInt8(ascii: "$"), index + 1 < input.count, isDigit(input[index + 1]) else {
                index += 1
                continue
            }
            var end = index + 1
            var number = 0
            while end < input.count, isDigit(input[end]) {
                number = min(number * 10 + Int(input[end] - UInt8(ascii: "0")), Int(Int32.max))
                end += 1
            }
            placeholders.append(index..<end)
            if number != placeholders.count { inOrder = false }
            index = end
        }
        guard !placeholders.isEmpty else { return sql }
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var copied = 0
        for placeholder in placeholders {
            output += input[copied..<placeholder.lowerBound]
            output.append(UInt8(ascii: "?"))
            if !inOrder { output += input[(placeholder.lowerBound + 1)..<placeholder.upperBound] }
            copied = placeholder.upperBound
        }
        output += input[copied...]
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: Running statements (the caller holds the lock)

    /// Whether a commit may wait for the disk.
    private var commitsWait: Bool {
        synchronous == .full || commitsCheckpoint.load(ordering: .relaxed)
    }

    /// A statement outside a transaction: it commits by itself.
    private func runAlone(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        do throws(SQLiteHandle.Failure) {
            if let rows = try runHereIfQuick(sql, binds) { return rows }
        } catch  where error.isBusy {
            // Nothing was done: tried again below, where waiting blocks no task.
        } catch {
            throw error.error
        }
        return try await runOnThreadPool(sql, binds)
    }

    /// Runs a statement outside a transaction on this thread, unless it may wait for the disk
    /// (nil); fails as busy, having done nothing, when another connection holds the lock.
    private func runHereIfQuick(_ sql: String, _ binds: [SQLValue]) throws(SQLiteHandle.Failure) -> [SQLRow]? {
        if binds.count > Self.inlineBindLimit { return nil }
        if commitsWait, !(try handle.isReadOnly(sql)) { return nil }
        return try withoutWaiting { () throws(SQLiteHandle.Failure) in try handle.execute(sql, binds) }
    }

    /// A statement inside a transaction, which holds the write lock: it never waits for
    /// another connection, and only its commit touches the disk.
    fileprivate func runInTransaction(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        if binds.count > Self.inlineBindLimit { return try await runOnThreadPool(sql, binds) }
        do throws(SQLiteHandle.Failure) {
            return try handle.execute(sql, binds)
        } catch {
            throw error.error
        }
    }

    private func begin() async throws(StorageError) {
        do throws(SQLiteHandle.Failure) {
            try withoutWaiting { () throws(SQLiteHandle.Failure) in try handle.execute("BEGIN IMMEDIATE") }
            return
        } catch  where error.isBusy {
            // Another connection writes: wait for it on the thread pool.
        } catch {
            throw error.error
        }
        try await runOnThreadPool("BEGIN IMMEDIATE", [])
    }

    private func commit() async throws(StorageError) {
        if commitsWait {
            try await runOnThreadPool("COMMIT", [])
        } else {
            do throws(SQLiteHandle.Failure) {
                try handle.execute("COMMIT")
            } catch {
                throw error.error
            }
        }
    }

    /// Runs `body` with a busy timeout of zero: a lock held by another connection fails it at
    /// once instead of blocking the task's thread.
    @discardableResult
    private func withoutWaiting<Result>(_ body: () throws(SQLiteHandle.Failure) -> Result) throws(SQLiteHandle.Failure) -> Result {
        handle.busyTimeoutMilliseconds = 0
        defer { handle.busyTimeoutMilliseconds = Self.busyTimeoutMilliseconds }
        return try body()
    }

    @discardableResult
    private func runOnThreadPool(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        let handle = self.handle
        return try await Self.onThreadPool { () throws(StorageError) in
            do throws(SQLiteHandle.Failure) {
                return try handle.execute(sql, binds)
            } catch {
                throw error.error
            }
        }
    }

    /// Runs `body` on a thread of `NIOThreadPool.singleton`. It is not cut short by the task's
    /// cancellation (the pool's async API drops work not yet started when its task is
    /// cancelled): a transaction left open would fail every later BEGIN, and what a stopping
    /// server records last (its devices gone offline) would be lost.
    static func onThreadPool<Result: Sendable>(
        _ body: @escaping @Sendable () throws(StorageError) -> Result
    ) async throws(StorageError) -> Result {
        do {
            return try await NIOThreadPool.singleton.runIfActive(eventLoop: MultiThreadedEventLoopGroup.singleton.any()) { try body() }.get()
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.queryFailed, "SQLite's thread pool: \(error)")
        }
    }

    private func locked<Result>(_ body: () async throws(StorageError) -> Result) async throws(StorageError) -> Result {
        await lock.acquire()
        defer { lock.release() }
        return try await body()
    }

    private struct Transaction: SQLExecutor {
        let engine: SQLiteEngine
        var dialect: SQLDialect { .sqlite }

        func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
            try await engine.runInTransaction(sql, binds)
        }
    }
}

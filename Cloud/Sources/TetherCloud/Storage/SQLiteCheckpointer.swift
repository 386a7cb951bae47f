import Logging
import ServiceLifecycle

/// Copies SQLite's write-ahead log into the database file from a connection of its own, so
/// that no commit waits for it.
///
/// Left to itself SQLite checkpoints inside the commit that takes the log past 1,000 pages:
/// that commit, and every statement queued behind it on the engine's one connection, waits
/// while about 4 MB are written and synced. While this service runs, the engine's connection
/// does not checkpoint; this one does, every `interval`, with `PASSIVE` (it never holds up a
/// writer), and the next write after a checkpoint that caught up starts the log over. Under a
/// steady stream of writes a passive checkpoint may never catch up, so past `restartPages` not
/// yet copied it has the engine restart the log between two of its statements, waiting for
/// other connections at most `restartWaitMilliseconds`. When a checkpoint fails, and when the
/// service stops, the engine checkpoints for itself again.
struct SQLiteCheckpointer: Service {
    let engine: SQLiteEngine
    var interval: Duration = .milliseconds(200)
    var restartPages = 8_192
    var restartWaitMilliseconds = 100
    let logger: Logger

    /// Whether `path` names a database file another connection can open (not one in memory).
    static func applies(to path: String) -> Bool {
        !path.isEmpty && path != ":memory:" && !path.contains("mode=memory")
    }

    func run() async throws {
        let connection: SQLiteHandle
        do {
            let path = engine.path
            connection = try await SQLiteEngine.onThreadPool { () throws(StorageError) in
                try SQLiteHandle(path: path, busyTimeoutMilliseconds: SQLiteEngine.busyTimeoutMilliseconds)
            }
        } catch {
            // Commits checkpoint as SQLite does by default: slower at times, nothing lost.
            logger.warning("SQLite checkpoints stay with commits: no connection of their own", metadata: ["error": "\(error)"])
            try? await gracefulShutdown()
            return
        }
        let handedOver = await cancelWhenGracefulShutdown { () async -> Bool in
            var handedOver = false
            while !Task.isCancelled {
                let done = await checkpoint(connection)
                if done != handedOver {
                    // Taken while checkpoints succeed; given back to commits while they fail, so
                    // that the log cannot grow without end.
                    do {
                        try await engine.setAutocheckpoint(pages: done ? 0 : SQLiteEngine.autocheckpointPages)
                        handedOver = done
                        if !done { logger.warning("SQLite checkpoints are back with commits until one of the checkpointer's succeeds") }
                    } catch {
                        logger.warning("SQLite checkpointer: autocheckpoint not changed", metadata: ["error": "\(error)"])
                    }
                }
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    break
                }
            }
            return handedOver
        }
        if handedOver { try? await engine.setAutocheckpoint(pages: SQLiteEngine.autocheckpointPages) }
        _ = try? await SQLiteEngine.onThreadPool { () throws(StorageError) in connection.close() }
    }

    /// One checkpoint; whether it ran.
    private func checkpoint(_ connection: SQLiteHandle) async -> Bool {
        do {
            // One row: busy, pages in the log, pages of it now in the database file. It writes
            // and syncs the database file, so it runs on the thread pool.
            let row = try await SQLiteEngine.onThreadPool { () throws(StorageError) in
                do throws(SQLiteHandle.Failure) {
                    return try connection.execute("PRAGMA wal_checkpoint(PASSIVE)").first
                } catch {
                    throw error.error
                }
            }
            let logPages = row?.optionalInt("log") ?? 0
            let copiedPages = row?.optionalInt("checkpointed") ?? 0
            if copiedPages < logPages, logPages > restartPages {
                try await engine.restartLog(waitingAtMost: restartWaitMilliseconds)
            }
            return true
        } catch {
            logger.warning("SQLite checkpoint failed", metadata: ["error": "\(error)"])
            return false
        }
    }
}

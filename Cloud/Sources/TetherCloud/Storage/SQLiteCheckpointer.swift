import Logging
import ServiceLifecycle
import SQLiteNIO

/// Copies SQLite's write-ahead log into the database file from a connection of its own, so
/// that no commit waits for it.
///
/// Left to itself SQLite checkpoints inside the commit that takes the log past 1,000 pages:
/// that commit, and every statement queued behind it on the engine's one connection, waits
/// while about 4 MB are written and synced. While this service runs, the engine's connection
/// does not checkpoint; this one does, every `interval`, with `PASSIVE` (it never holds up a
/// writer). Under a steady stream of writes a passive checkpoint may never find the log
/// caught up, which is when SQLite starts the log over, so past `restartPages` it restarts
/// the log itself, briefly between two statements of the engine. When the service stops the
/// engine checkpoints for itself again.
struct SQLiteCheckpointer: Service {
    let engine: SQLiteEngine
    var interval: Duration = .milliseconds(200)
    var restartPages = 8_192
    let logger: Logger

    func run() async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: engine.path), logger: logger)
        do {
            _ = try await connection.query("PRAGMA busy_timeout = 5000")
            try await engine.setAutocheckpoint(pages: 0)
        } catch {
            try? await connection.close().get()
            throw error
        }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                await checkpoint(connection)
            }
        }
        try? await engine.setAutocheckpoint(pages: SQLiteEngine.autocheckpointPages)
        // The future's close, which cancellation does not cut short: a connection left open
        // traps when it is released.
        try? await connection.close().get()
    }

    private func checkpoint(_ connection: SQLiteConnection) async {
        do {
            // One row: busy, pages in the log, pages of it now in the database file.
            let row = try await connection.query("PRAGMA wal_checkpoint(PASSIVE)").first
            let logPages = row?.columns.dropFirst().first?.data.integer ?? 0
            if logPages > restartPages {
                try await engine.query("PRAGMA wal_checkpoint(RESTART)")
            }
        } catch {
            logger.warning("SQLite checkpoint failed; the next one tries again", metadata: ["error": "\(error)"])
        }
    }
}

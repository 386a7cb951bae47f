/// When a SQLite commit returns, relative to the disk (SQLite's `PRAGMA synchronous`, with the
/// write-ahead log the cloud always uses).
public enum SQLiteSynchronous: String, Sendable, Hashable, CaseIterable {
    /// Every commit is on disk when it returns (an `fsync` of the log each time): what was
    /// answered survives the process's crash and the machine's power loss. The default.
    case full
    /// A commit is in the operating system when it returns, and on disk at the next checkpoint:
    /// what was answered survives the process's crash (`kill -9`), but a power loss or a crash
    /// of the operating system may take the last commits back, never leaving the database
    /// inconsistent. Saves an `fsync` per commit (0.4 ms at the median on the reference
    /// machine's disk, 1.3 ms at p99).
    case normal
}

/// The `settings` table: values the whole deployment shares (keys made on first use).
struct SettingStore: Sendable {
    let executor: any SQLExecutor

    init(_ executor: any SQLExecutor) { self.executor = executor }

    func value(_ name: String) async throws(StorageError) -> String? {
        try await executor.first("SELECT value FROM settings WHERE name = $1", .text(name))?.text("value")
    }

    /// Stores `value` unless `name` already has one (of two nodes racing, the first wins).
    func insertIfAbsent(_ name: String, _ value: String) async throws(StorageError) {
        try await executor.query("INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", .text(name), .text(value))
    }
}

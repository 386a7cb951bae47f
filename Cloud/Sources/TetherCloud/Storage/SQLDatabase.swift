/// The SQL dialect a statement is written for. Statements use `$1`, `$2`, … placeholders in
/// both; everything else that differs between the engines is spelled out by the migrations.
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// Something that runs statements: a database, or the connection of one transaction.
public protocol SQLExecutor: Sendable {
    var dialect: SQLDialect { get }

    /// Runs one statement and returns its rows (none for statements without `RETURNING`).
    @discardableResult
    func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow]
}

extension SQLExecutor {
    @discardableResult
    public func query(_ sql: String, _ binds: SQLValue...) async throws(StorageError) -> [SQLRow] {
        try await query(sql, binds)
    }

    public func first(_ sql: String, _ binds: SQLValue...) async throws(StorageError) -> SQLRow? {
        try await query(sql, binds).first
    }
}

/// One storage interface, two engines: ``SQLiteEngine`` (the default, a file) and
/// ``PostgresEngine`` (production, several cloud nodes).
public protocol SQLDatabase: SQLExecutor {
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    func transaction<Result: Sendable>(
        _ body: @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result

    /// Closes connections. Statements after this fail.
    func close() async
}

public import Logging
import NIOCore
public import PostgresNIO

/// The production engine: a pool of PostgreSQL connections, shareable by several cloud nodes.
public final class PostgresEngine: SQLDatabase {
    public let dialect = SQLDialect.postgres
    private let client: PostgresClient
    /// PostgresClient's `run()`: the pool lives while it runs. The engine owns this task (the
    /// one the SQLDatabase interface cannot scope: a database is opened and closed, not run)
    /// and ends it in ``close()``.
    private let runTask: Task<Void, Never>
    private let logger: Logger

    /// Connects to the server described by `configuration` and checks that it answers.
    public static func connect(
        _ configuration: PostgresClient.Configuration,
        logger: Logger
    ) async throws(StorageError) -> PostgresEngine {
        let engine = PostgresEngine(client: PostgresClient(configuration: configuration, backgroundLogger: logger), logger: logger)
        do {
            try await engine.query("SELECT 1")
        } catch {
            await engine.close()
            throw StorageError(.connectionFailed, "cannot reach PostgreSQL: \(error.message)")
        }
        return engine
    }

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        self.runTask = Task { await client.run() }
    }

    public func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
        do {
            return try await client.withConnection { connection in
                try await Self.run(sql, binds, on: connection, logger: self.logger)
            }
        } catch {
            throw Self.storageError(error)
        }
    }

    public func transaction<Result: Sendable>(
        _ body: @Sendable (any SQLExecutor) async throws -> Result
    ) async throws -> Result {
        do {
            return try await client.withConnection { connection in
                let executor = Transaction(connection: connection, logger: self.logger)
                try await executor.query("BEGIN")
                let result: Result
                do {
                    result = try await body(executor)
                } catch {
                    _ = try? await executor.query("ROLLBACK")
                    throw error
                }
                try await executor.query("COMMIT")
                return result
            }
        } catch let error as StorageError {
            throw error
        } catch let error as PSQLError {
            throw Self.storageError(error)
        }
    }

    /// Holds one connection that `LISTEN`s on `channel` and hands `consume` the payloads of
    /// its notifications, until `consume` returns or the connection fails.
    func listen(channel: String, consume: @Sendable (PostgresNotificationSequence) async throws -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                try await consume(notifications)
            }
        }
    }

    public func close() async {
        runTask.cancel()
        await runTask.value
    }

    fileprivate static func run(
        _ sql: String,
        _ binds: [SQLValue],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [SQLRow] {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            switch bind {
            case .int(let value): bindings.append(value)
            case .double(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            case .null: bindings.appendNull()
            }
        }
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        var result: [SQLRow] = []
        var columns: SQLColumns?
        for try await row in rows {
            var cells: [SQLValue] = []
            cells.reserveCapacity(columns?.count ?? 8)
            for cell in row {
                cells.append(try value(cell))
            }
            let names = columns ?? SQLColumns(names: row.map(\.columnName))
            columns = names
            result.append(SQLRow(columns: names, cells: cells))
        }
        return result
    }

    private static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2: return .int(Int64(try cell.decode(Int16.self)))
        case .int4: return .int(Int64(try cell.decode(Int32.self)))
        case .int8: return .int(try cell.decode(Int64.self))
        case .bool: return .int(try cell.decode(Bool.self) ? 1 : 0)
        case .float4, .float8, .numeric: return .double(try cell.decode(Double.self))
        case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
        default: return .text(try cell.decode(String.self))
        }
    }

    private static func storageError(_ error: any Error) -> StorageError {
        if let error = error as? StorageError { return error }
        if let error = error as? PSQLError {
            let state = error.serverInfo?[.sqlState]
            let message = error.serverInfo?[.message] ?? String(describing: error.code)
            // 23505: unique_violation
            return StorageError(state == "23505" ? .uniqueViolation : .queryFailed, message)
        }
        return StorageError(.queryFailed, String(describing: error))
    }

    private struct Transaction: SQLExecutor {
        let connection: PostgresConnection
        let logger: Logger
        var dialect: SQLDialect { .postgres }

        func query(_ sql: String, _ binds: [SQLValue]) async throws(StorageError) -> [SQLRow] {
            do {
                return try await PostgresEngine.run(sql, binds, on: connection, logger: logger)
            } catch {
                throw PostgresEngine.storageError(error)
            }
        }
    }
}

import Foundation
public import Logging
import PostgresNIO

/// Where the cloud keeps its data: `sqlite:PATH[?synchronous=normal]` or
/// `postgres://USER:PASSWORD@HOST:PORT/DB`.
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String, synchronous: SQLiteSynchronous = .full)
    case postgres(host: String, port: Int, username: String, password: String?, database: String, requireTLS: Bool)

    /// The default: a file in `./tether-data/`, so `tether-cloud serve` needs no set-up.
    public static let `default` = DatabaseURL.sqlite(path: "tether-data/tether.sqlite")

    public init(_ text: String) throws(StorageError) {
        if text.hasPrefix("sqlite:") {
            var path = Substring(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            var synchronous = SQLiteSynchronous.full
            if let question = path.lastIndex(of: "?"), path[path.index(after: question)...].hasPrefix("synchronous=") {
                let value = path[path.index(after: question)...].dropFirst("synchronous=".count)
                guard let parsed = SQLiteSynchronous(rawValue: String(value)) else {
                    throw StorageError(.invalidURL, "synchronous= is full or normal, got \(value)")
                }
                synchronous = parsed
                path = path[..<question]
            }
            guard !path.isEmpty else { throw StorageError(.invalidURL, "sqlite: needs a file path, as in sqlite:tether-data/tether.sqlite") }
            self = .sqlite(path: String(path), synchronous: synchronous)
            return
        }
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty
        else {
            throw StorageError(.invalidURL, "expected sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DB, got \(Self.redacted(text))")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw StorageError(.invalidURL, "the PostgreSQL URL names no database") }
        let tlsMode = components.queryItems?.first { $0.name == "sslmode" }?.value
        self = .postgres(
            host: host,
            port: components.port ?? 5432,
            username: components.user ?? "postgres",
            password: components.password,
            database: database,
            requireTLS: tlsMode == "require"
        )
    }

    /// The URL without its password, for logs and error messages.
    public var description: String {
        switch self {
        case .sqlite(let path, .full): "sqlite:\(path)"
        case .sqlite(let path, let synchronous): "sqlite:\(path)?synchronous=\(synchronous.rawValue)"
        case .postgres(let host, let port, let username, _, let database, _): "postgres://\(username)@\(host):\(port)/\(database)"
        }
    }

    /// Opens the database and brings its schema up to date. `maximumConnections` bounds a
    /// PostgreSQL pool (PostgresNIO's default, 20, when nil); SQLite has one connection.
    public func open(logger: Logger, maximumConnections: Int? = nil) async throws(StorageError) -> any SQLDatabase {
        let database = try await openWithoutMigrating(logger: logger, maximumConnections: maximumConnections)
        do {
            try await Migrations.run(on: database, logger: logger)
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    /// Opens the database as it is.
    public func openWithoutMigrating(logger: Logger, maximumConnections: Int? = nil) async throws(StorageError) -> any SQLDatabase {
        switch self {
        case .sqlite(let path, let synchronous):
            return try await SQLiteEngine.open(path: path, synchronous: synchronous, logger: logger)
        case .postgres(let host, let port, let username, let password, let name, let requireTLS):
            var configuration = PostgresClient.Configuration(
                host: host, port: port, username: username, password: password, database: name,
                tls: requireTLS ? .require(.makeClientConfiguration()) : .disable
            )
            configuration.options.connectTimeout = .seconds(5)
            if let maximumConnections {
                configuration.options.maximumConnections = maximumConnections
                configuration.options.minimumConnections = min(configuration.options.minimumConnections, maximumConnections)
            }
            return try await PostgresEngine.connect(configuration, logger: logger)
        }
    }

    private static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "(unreadable URL)"
    }
}

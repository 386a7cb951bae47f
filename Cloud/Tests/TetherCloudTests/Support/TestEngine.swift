import Foundation
import Logging
import Testing
@testable import TetherCloud

/// The two storage engines every storage test runs against.
enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let logger: Logger = {
        var logger = Logger(label: "tether-cloud-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// A fresh, empty database of this engine for the duration of `body`: a file in a new
    /// temporary directory, or a new database on the PostgreSQL server that `scripts/test.sh`
    /// starts (`TETHER_TEST_POSTGRES_URL`).
    func withFreshDatabase<Result>(_ body: (DatabaseURL) async throws -> Result) async throws -> Result {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cloud-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            return try await body(.sqlite(path: directory.appendingPathComponent("test.sqlite").path))
        case .postgres:
            guard let serverURL = ProcessInfo.processInfo.environment["TETHER_TEST_POSTGRES_URL"] else {
                Issue.record("TETHER_TEST_POSTGRES_URL is not set: run the tests with scripts/test.sh, which starts PostgreSQL")
                throw CancellationError()
            }
            guard case .postgres(let host, let port, let username, let password, _, _) = try DatabaseURL(serverURL) else {
                Issue.record("TETHER_TEST_POSTGRES_URL is not a postgres:// URL")
                throw CancellationError()
            }
            let name = "tether_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            let server = try await DatabaseURL(serverURL).openWithoutMigrating(logger: Self.logger)
            try await server.query("CREATE DATABASE \(name)")
            do {
                let result = try await body(.postgres(host: host, port: port, username: username, password: password, database: name, requireTLS: false))
                try await server.query("DROP DATABASE \(name) WITH (FORCE)")
                await server.close()
                return result
            } catch {
                _ = try? await server.query("DROP DATABASE \(name) WITH (FORCE)")
                await server.close()
                throw error
            }
        }
    }

    /// Connections a test node's PostgreSQL pool may hold: the suite runs many nodes at once
    /// against one server, whose connections are bounded (scripts/postgres-test-server.sh).
    static let poolSize = 8

    /// A fresh database, migrated and open.
    func withDatabase<Result>(_ body: (any SQLDatabase) async throws -> Result) async throws -> Result {
        try await withFreshDatabase { url in
            let database = try await url.open(logger: Self.logger, maximumConnections: TestEngine.poolSize)
            do {
                let result = try await body(database)
                await database.close()
                return result
            } catch {
                await database.close()
                throw error
            }
        }
    }
}

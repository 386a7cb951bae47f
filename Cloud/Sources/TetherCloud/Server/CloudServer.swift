public import Hummingbird
public import Logging
public import NIOCore
import ServiceLifecycle
import UnixSignals

/// The cloud's HTTP API, ready to run: the routes of the Open API over one database.
public enum CloudServer {
    /// Builds the application. The caller owns `database` and closes it after the application
    /// stops; `TetherCloudService` does both for `tether-cloud serve`.
    public static func makeApplication(
        configuration: CloudConfiguration,
        database: any SQLDatabase,
        sender: (any MessageSender)? = nil,
        metrics: CloudMetrics = CloudMetrics(),
        logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        CloudNode(configuration: configuration, database: database, sender: sender, metrics: metrics, logger: logger)
            .makeApplication(onServerRunning: onServerRunning)
    }

    /// Opens the database (migrating it), serves until SIGTERM or SIGINT, finishes the requests
    /// in flight and closes the database.
    public static func serve(
        configuration: CloudConfiguration,
        metrics: CloudMetrics = CloudMetrics(),
        logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) async throws {
        let database = try await configuration.database.open(logger: logger)
        logger.info("database ready", metadata: ["database": "\(configuration.database)"])
        // Nodes sharing PostgreSQL hear each other through it; a SQLite cloud is one node.
        let bus: any ClusterBus =
            if let postgres = database as? PostgresEngine {
                PostgresClusterBus(engine: postgres, logger: logger)
            } else {
                LocalClusterBus()
            }
        let application = CloudNode(configuration: configuration, database: database, bus: bus, metrics: metrics, logger: logger)
            .makeApplication(onServerRunning: onServerRunning)
        do {
            try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}

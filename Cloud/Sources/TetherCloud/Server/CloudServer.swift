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
        let outbox = OutboxSender(database: database)
        let defaultSender: any MessageSender = if let smtp = configuration.smtp {
            RoutingSender(email: SMTPSender(configuration: smtp, logger: logger), outbox: outbox, logger: logger)
        } else {
            outbox
        }
        let accounts = AccountService(
            database: database,
            sender: sender ?? defaultSender,
            policy: configuration.accounts,
            publicURL: configuration.resolvedPublicURL,
            tokenVerifier: ThirdPartyTokenVerifier(logger: logger),
            logger: logger
        )
        let endpoint = configuration.resolvedM2M
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: MetricsMiddleware())
        let catalogue = OperationCatalogue()
        let documented = DocumentedRouter(router: router, catalogue: catalogue)
        AccountRoutes(accounts: accounts, metrics: metrics).register(on: documented)
        DeviceRoutes(
            accounts: accounts,
            registry: DeviceRegistry(database: database, endpoint: endpoint),
            bindings: BindingService(database: database, endpoint: endpoint)
        ).register(on: documented)
        SystemRoutes(accounts: accounts, metrics: metrics, catalogue: catalogue).register(on: documented)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.bindAddress, port: configuration.httpPort), serverName: "tether-cloud"),
            onServerRunning: onServerRunning,
            logger: logger
        )
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
        let application = makeApplication(
            configuration: configuration, database: database, metrics: metrics, logger: logger,
            onServerRunning: onServerRunning
        )
        do {
            try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}

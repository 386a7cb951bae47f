public import Hummingbird
import HummingbirdWebSocket
public import Logging
public import NIOCore
import ServiceLifecycle

/// One running cloud node: the HTTP API with the WebSocket M2M API, the device gateway, and the
/// bus that joins them to each other and to the other nodes sharing the database.
public struct CloudNode: Sendable {
    public let configuration: CloudConfiguration
    public let database: any SQLDatabase
    public let bus: any ClusterBus
    /// Nil when `configuration.gateway` is nil.
    public let gateway: DeviceGateway?
    /// Nil when `configuration.metricsAddress` is nil.
    public let metricsListener: MetricsListener?
    let accounts: AccountService
    let hub: RealtimeHub
    let control: ControlService
    let rrpc: RRPCService
    let history: DeviceHistory
    let catalogue: DeviceCatalogue
    let metrics: CloudMetrics
    let schedules: ScheduleService
    /// Fires due schedules (a service of the application; tests fire by hand with their clock).
    let scheduleFiring: ScheduleFiring
    /// Takes scenes' and groups' due steps (a service; tests advance it by hand with their clock).
    let automationRunner: AutomationRunner
    /// Evaluates linkage rules on the gateway's events (a service: it also takes events a node
    /// that stopped left behind).
    let ruleEngine: RuleEngine
    /// Where devices download firmware from (and users reach the API).
    public let publicAddress: PublicAddress
    let logger: Logger

    /// - Parameter bus: how this node talks to the others; an in-process bus by default (one
    ///   node). Nodes sharing PostgreSQL use ``PostgresClusterBus``.
    /// - Parameter clock: the scheduler's time.
    public init(
        configuration: CloudConfiguration,
        database: any SQLDatabase,
        bus: (any ClusterBus)? = nil,
        sender: (any MessageSender)? = nil,
        metrics: CloudMetrics = CloudMetrics(),
        clock: any WallClock = SystemWallClock(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.database = database
        self.metrics = metrics
        self.logger = logger
        let bus = bus ?? LocalClusterBus()
        self.bus = bus
        let publicAddress = PublicAddress(configuration: configuration)
        self.publicAddress = publicAddress
        let outbox = OutboxSender(database: database)
        let defaultSender: any MessageSender =
            if let smtp = configuration.smtp {
                RoutingSender(email: SMTPSender(configuration: smtp, logger: logger), outbox: outbox, logger: logger)
            } else {
                outbox
            }
        accounts = AccountService(
            database: database,
            sender: sender ?? defaultSender,
            policy: configuration.accounts,
            publicURL: configuration.resolvedPublicURL,
            tokenVerifier: ThirdPartyTokenVerifier(logger: logger),
            abuse: configuration.abuse,
            bus: bus,
            logger: logger
        )
        catalogue = DeviceCatalogue(database: database)
        history = DeviceHistory(database: database)
        hub = RealtimeHub(bus: bus, database: database, logger: logger)
        control = ControlService(
            database: database, bus: bus, catalogue: catalogue,
            maximumQueueSeconds: configuration.gateway?.maximumQueueSeconds ?? GatewayConfiguration().maximumQueueSeconds, metrics: metrics
        )
        rrpc = RRPCService(database: database, bus: bus, history: history, logger: logger)
        let maximumQueueSeconds = configuration.gateway?.maximumQueueSeconds ?? GatewayConfiguration().maximumQueueSeconds
        schedules = ScheduleService(
            database: database, bus: bus, catalogue: catalogue, clock: clock, configuration: configuration.scheduler, maximumQueueSeconds: maximumQueueSeconds)
        let automationControl = AutomationControl(database: database, catalogue: catalogue)
        scheduleFiring = ScheduleFiring(
            database: database, bus: bus, catalogue: catalogue, control: automationControl, clock: clock, configuration: configuration.scheduler,
            logger: logger)
        automationRunner = AutomationRunner(
            database: database, bus: bus, control: automationControl, clock: clock, configuration: configuration.scheduler, logger: logger)
        let ruleEngine = RuleEngine(
            database: database, catalogue: catalogue, runner: automationRunner, configuration: configuration.scheduler, logger: logger)
        self.ruleEngine = ruleEngine
        metricsListener = configuration.metricsAddress.map { MetricsListener(host: $0.host, port: $0.port, metrics: metrics, logger: logger) }
        gateway = configuration.gateway.map { gateway in
            DeviceGateway(
                configuration: gateway, bindAddress: configuration.bindAddress, database: database, bus: bus, publicAddress: publicAddress, metrics: metrics,
                rules: ruleEngine, logger: logger)
        }
    }

    /// The application: routes, the WebSocket upgrade at `/ws/app/v1`, and the node's
    /// services (bus, hub, gateway) running beside the HTTP server.
    public func makeApplication(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
        let endpoint = configuration.resolvedM2M
        let router = Router(context: CloudRequestContext.self)
        let sources = ClientSourceResolver(trustedProxies: configuration.trustedProxies)
        router.add(middleware: SecurityHeadersMiddleware(strictTransport: configuration.resolvedPublicURL.hasPrefix("https://")))
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: MetricsMiddleware())
        let catalogue = OperationCatalogue()
        let documented = DocumentedRouter(router: router, catalogue: catalogue)
        AccountRoutes(accounts: accounts, metrics: metrics, sources: sources).register(on: documented)
        DeviceRoutes(
            accounts: accounts,
            registry: DeviceRegistry(database: database, endpoint: endpoint, policy: configuration.abuse),
            bindings: BindingService(database: database, endpoint: endpoint, bus: bus, policy: configuration.abuse),
            sources: sources
        ).register(on: documented)
        ControlRoutes(
            accounts: accounts, control: control, rrpc: rrpc, userTopics: UserTopicService(database: database, bus: bus, history: history), history: history
        ).register(on: documented)
        ShadowRoutes(accounts: accounts, shadows: ShadowService(database: database, bus: bus)).register(on: documented)
        UpgradeRoutes(accounts: accounts, upgrades: FirmwareUpgrades(database: database, bus: bus)).register(on: documented)
        LANGrantRoutes(accounts: accounts, grants: LANGrants(database: database, lifetime: configuration.lanGrantLifetimeSeconds)).register(on: documented)
        TuyaLocalKeyRoutes(accounts: accounts, keys: TuyaLocalKeys(database: database)).register(on: documented)
        PairingRoutes(accounts: accounts, pairing: PairingTokens(database: database, bus: bus)).register(on: documented)
        let sharing = SharingService(database: database, bus: bus)
        SharingRoutes(accounts: accounts, sharing: sharing).register(on: documented)
        MessageRoutes(accounts: accounts, messages: MessageCentre(database: database, bus: bus)).register(on: documented)
        HomeRoutes(accounts: accounts, homes: HomeService(database: database, bus: bus)).register(on: documented)
        ScheduleRoutes(accounts: accounts, schedules: schedules).register(on: documented)
        GroupRoutes(accounts: accounts, groups: GroupService(database: database, control: control)).register(on: documented)
        RuleRoutes(accounts: accounts, rules: RuleService(database: database, catalogue: self.catalogue, engine: ruleEngine, clock: automationRunner.clock))
            .register(on: documented)
        SceneRoutes(
            accounts: accounts, scenes: SceneService(database: database, catalogue: self.catalogue, runner: automationRunner, clock: automationRunner.clock)
        ).register(on: documented)
        FirmwareRoutes(catalogue: FirmwareCatalogue(database: database), downloads: FirmwareDownloads(database: database)).register(on: documented)
        SystemRoutes(accounts: accounts, metrics: metrics, catalogue: catalogue).register(on: documented)
        var services: [any Service] = [
            bus, HubService(hub: hub), rrpc, ForwardingDelivery(database: database, logger: logger),
            AutomationLoop(firing: scheduleFiring, runner: automationRunner, rules: ruleEngine, configuration: configuration.scheduler, logger: logger),
        ]
        if let gateway { services.append(gateway) }
        // No commit waits for the log to be copied into the database file.
        if let sqlite = database as? SQLiteEngine, SQLiteCheckpointer.applies(to: sqlite.path) {
            services.append(SQLiteCheckpointer(engine: sqlite, logger: logger))
        }
        if let metricsListener { services.append(metricsListener) }
        let accounts = self.accounts, control = self.control, history = self.history, hub = self.hub, logger = self.logger
        let loginTimeout = configuration.http.webSocketLoginTimeout
        return Application(
            router: router,
            server: .guardedHTTP1WebSocketUpgrade(limits: configuration.http, exempt: configuration.trustedProxies) { request, _, _ in
                guard request.path?.split(separator: "?").first.map(String.init) == M2MWebSocket.path else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    let session = M2MSession(accounts: accounts, control: control, history: history, hub: hub, logger: logger)
                    await M2MWebSocket.serve(session, hub: hub, loginTimeout: loginTimeout, inbound: inbound, outbound: outbound, logger: logger)
                }
            },
            configuration: .init(address: .hostname(configuration.bindAddress, port: configuration.httpPort), serverName: "tether-cloud"),
            services: services,
            onServerRunning: { [publicAddress, bindAddress = configuration.bindAddress] channel in
                if let port = channel.localAddress?.port { publicAddress.listening(host: bindAddress, port: port) }
                await onServerRunning(channel)
            },
            logger: logger
        )
    }
}

/// Runs the hub's dispatch as a service of the application.
struct HubService: Service {
    let hub: RealtimeHub

    func run() async throws {
        await cancelWhenGracefulShutdown { await hub.run() }
    }
}

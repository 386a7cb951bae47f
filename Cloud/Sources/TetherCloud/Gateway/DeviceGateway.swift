import Logging
public import NIOCore
import NIOSSL
import Synchronization
public import ServiceLifecycle
import TetherAlink
import TetherCore
public import TetherMQTT

/// The MQTT gateway devices connect to: an embedded broker that authenticates devices by the
/// Alink signing schemes (`DeviceAuthenticator`) and keeps each on its own topics
/// (`GatewayHooks`). Around it: what devices report (`DeviceGateway+Uplink.swift`), whether
/// they are online (`DevicePresence`), their own secrets (`DeviceSelfRegistration`), the
/// ledger's commands (`CommandDelivery`), apps' synchronous calls (`RRPCRelay`), devices binding
/// themselves to their users (`DeviceAccountLink`), shadows (`DeviceShadowLink`), firmware
/// upgrades (`DeviceFirmwareLink`), and this node's heartbeat with the sweep of dead nodes
/// (`NodeHousekeeping`). This type hosts the broker and runs the pieces together.
public final class DeviceGateway: Service, Sendable {
    public let broker: MQTTBroker
    let configuration: GatewayConfiguration
    let bindAddress: String
    let bus: any ClusterBus
    let ledger: CommandLedger
    let history: DeviceHistory
    let catalogue: DeviceCatalogue
    let delivery: CommandDelivery
    let rrpc: RRPCRelay
    let accountLink: DeviceAccountLink
    let pairing: DevicePairingLink
    let shadows: DeviceShadowLink
    let firmware: DeviceFirmwareLink
    let lanGrants: LANGrants
    let subDevices: SubDeviceSessions
    let connections: DeviceConnections
    let topology: DeviceTopologyLink
    let forwarding: DataForwarding
    let notices: DeviceNotices
    let rules: RuleEngine?
    let presence: DevicePresence
    let registration: DeviceSelfRegistration
    let housekeeping: NodeHousekeeping
    let metrics: CloudMetrics
    let logger: Logger
    /// Presence changes are a few bytes, two per connection: never refused (a refused one would
    /// leave a device shown in the wrong state), so the queue's bound is only nominal.
    private let presenceChanges = BatchQueue<PresenceChange>(capacity: .max)
    let uplinks = BatchQueue<Uplink>(capacity: 50_000)
    private let credentialLookups: DeviceCredentialLookups

    struct Uplink: Sendable {
        var message: MQTTMessage
        var publisher: MQTTPrincipal
    }

    /// - Parameter rules: what evaluates the node's linkage rules on the devices' events.
    init(
        configuration: GatewayConfiguration, bindAddress: String, database: any SQLDatabase, bus: any ClusterBus, publicAddress: PublicAddress,
        metrics: CloudMetrics = CloudMetrics(), rules: RuleEngine? = nil, logger: Logger
    ) {
        self.rules = rules
        self.configuration = configuration
        self.bindAddress = bindAddress
        self.bus = bus
        self.ledger = CommandLedger(database: database)
        self.history = DeviceHistory(database: database)
        self.catalogue = DeviceCatalogue(database: database)
        self.metrics = metrics
        self.logger = logger
        let subDevices = SubDeviceSessions()
        self.subDevices = subDevices
        let forwarding = DataForwarding(database: database, logger: logger)
        self.forwarding = forwarding
        let notices = DeviceNotices(database: database, bus: bus, logger: logger)
        self.notices = notices
        credentialLookups = DeviceCredentialLookups(database: database, logger: logger)
        let authenticator = DeviceAuthenticator(database: database, lookups: credentialLookups, configuration: configuration, logger: logger)
        var brokerConfiguration = MQTTBrokerConfiguration()
        brokerConfiguration.maximumQoS = .atLeastOnce
        brokerConfiguration.connectTimeout = configuration.connectTimeout
        let broker = MQTTBroker(
            configuration: brokerConfiguration,
            hooks: GatewayHooks(authenticator: authenticator, presence: presenceChanges, subDevices: subDevices),
            logger: logger
        )
        self.broker = broker
        let connections = DeviceConnections(broker: broker, catalogue: catalogue, subDevices: subDevices)
        self.connections = connections
        let answerTimeoutMs = configuration.answerTimeoutSeconds * 1000
        firmware = DeviceFirmwareLink(
            broker: broker, database: database, ledger: ledger, history: history, bus: bus, publicAddress: publicAddress, logger: logger)
        delivery = CommandDelivery(
            broker: broker, connections: connections, ledger: ledger, history: history, catalogue: catalogue, bus: bus, answerTimeoutMs: answerTimeoutMs,
            firmware: firmware,
            logger: logger
        )
        lanGrants = LANGrants(database: database)
        rrpc = RRPCRelay(broker: broker, connections: connections, history: history, bus: bus, logger: logger)
        // Binding by the device uses no endpoint: the M2M endpoint only goes into device lists.
        accountLink = DeviceAccountLink(
            tokens: IoTTokens(database: database), bindings: BindingService(database: database, endpoint: M2MEndpoint(), bus: bus), logger: logger)
        pairing = DevicePairingLink(tokens: PairingTokens(database: database, bus: bus), logger: logger)
        shadows = DeviceShadowLink(broker: broker, connections: connections, documents: ShadowDocuments(database: database), logger: logger)
        presence = DevicePresence(
            nodeID: configuration.nodeID, broker: broker, database: database, history: history, catalogue: catalogue,
            delivery: delivery, bus: bus, subDevices: subDevices, forwarding: forwarding, notices: notices, rules: rules, metrics: metrics,
            logger: logger
        )
        topology = DeviceTopologyLink(
            database: database, sessions: subDevices, presence: presence, timestampSkew: configuration.timestampSkew, logger: logger)
        registration = DeviceSelfRegistration(broker: broker, database: database, logger: logger)
        housekeeping = NodeHousekeeping(
            nodeID: configuration.nodeID, database: database, ledger: ledger, history: history, bus: bus,
            answerTimeoutMs: answerTimeoutMs, nodeTimeoutMs: configuration.nodeTimeoutSeconds * 1000, rules: rules,
            reclaim: { [presence] in try await presence.reclaim() }, logger: logger
        )
    }

    /// The addresses the gateway listens on, once it does.
    public func addresses() async throws -> [SocketAddress] { try await broker.addresses() }

    var nodeID: String { configuration.nodeID }

    public func run() async throws {
        try await housekeeping.heartbeat()
        try await presence.forgetPreviousProcess()
        var wanted: [MQTTListener] = []
        if let port = configuration.mqttPort { wanted.append(.tcp(host: bindAddress, port: port)) }
        if let port = configuration.tlsPort, let tls = configuration.tls {
            wanted.append(try .tls(host: bindAddress, port: port, configuration: tls))
        }
        let listeners = wanted
        let queue = uplinks
        let metrics = self.metrics
        let enqueue: @Sendable (MQTTMessage, MQTTPrincipal?) -> Void = { [broker] message, publisher in
            // What the cloud itself sends down has no publisher. Beyond the queue's capacity the
            // newest messages are dropped (counted): devices see no reply and post again.
            guard let publisher else { return }
            guard !queue.push(Uplink(message: message, publisher: publisher)) else { return }
            metrics.uplinkDropped()
            // Answer what can be answered: a device SDK stops posting after enough requests
            // without a reply.
            Self.refuseBusy(message, publisher: publisher, broker: broker)
        }
        let observations = [
            try broker.observe("/sys/#", enqueue), try broker.observe("/ext/rrpc/#", enqueue), try broker.observe("/shadow/update/#", enqueue),
            try broker.observe("/ota/device/inform/#", enqueue), try broker.observe("/ota/device/progress/#", enqueue),
            try broker.observe("/ext/session/#", enqueue),
            // Custom topics; a device named "user" also matches this filter with its /sys/ topics.
            try broker.observe("/+/+/user/#") { message, publisher in
                guard let topic = AlinkDeviceTopic(parsing: message.topic), case .user = topic.topic, topic.rrpcMessageID == nil else { return }
                enqueue(message, publisher)
            },
        ]
        defer { for observation in observations { observation.cancel() } }
        let events = bus.events()
        try await delivery.resumeUnsent()
        // Graceful shutdown cancels the tasks below; the broker then closes its listeners.
        await cancelWhenGracefulShutdown {
            // Each child but the announcement runs until cancelled: the first to end ends all.
            await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    do {
                        try await self.broker.run(listeners: listeners)
                    } catch {
                        self.logger.error("the device gateway cannot listen", metadata: ["error": "\(error)"])
                    }
                    return true
                }
                group.addTask {
                    await self.announce(); return false
                }
                group.addTask {
                    await self.presence.process(self.presenceChanges, registration: self.registration); return true
                }
                group.addTask {
                    await self.processUplinks(); return true
                }
                group.addTask {
                    await self.credentialLookups.run(); return true
                }
                group.addTask {
                    await self.processClusterEvents(events); return true
                }
                group.addTask {
                    await self.housekeeping.run(); return true
                }
                group.addTask {
                    await self.offerQueuedUpgrades(); return true
                }
                while let essential = await group.next(), !essential {}
                group.cancelAll()
            }
        }
        await leave()
    }

    /// Says where the gateway listens, once it does.
    private func announce() async {
        guard let addresses = try? await broker.addresses() else { return }
        logger.notice("device gateway listening", metadata: ["addresses": "\(addresses.map { "\($0)" }.joined(separator: ", "))", "node": "\(nodeID)"])
    }

    /// Answers a request the gateway has no room for with 429, on its reply topic.
    static func refuseBusy(_ message: MQTTMessage, publisher: MQTTPrincipal, broker: MQTTBroker) {
        guard let topic = AlinkDeviceTopic(parsing: message.topic), let replyTopic = topic.topic.reply,
            let request = try? AlinkRequest(parsing: message.payload.readableBytesView)
        else { return }
        var destination = topic
        destination.topic = replyTopic
        let reply = request.reply(code: AlinkCodes.busy, message: "the cloud is busy; post again later")
        broker.send(MQTTMessage(topic: destination.name, payload: ByteBuffer(bytes: reply.bytes), qos: .atLeastOnce), toClientID: publisher.clientID)
    }

    private func processClusterEvents(_ events: AsyncStream<ClusterEvent>) async {
        for await event in events {
            do {
                switch event {
                case .deliver(let commandID, let did):
                    // Every node hears every delivery; only the one holding the device reads it.
                    guard try await connections.route(did) != nil else { break }
                    if let command = try await ledger.find(commandID) { try await delivery.send(command) }
                case .rrpcRequest(let request):
                    try await rrpc.send(request)
                case .shadowDesired(let did):
                    try await shadows.pushDesired(did: did)
                case .userPublish(let did, let topic, let hex, let qos):
                    try await publishToDevice(did: did, topic: topic, payloadHex: hex, qos: qos)
                case .presence(let did, true, let node?, let atMs) where node != nodeID:
                    try await presence.connectedElsewhere(did: did, atMs: atMs)
                default:
                    break
                }
            } catch {
                logger.error("a cluster event could not be handled", metadata: ["did": "\(event.did)", "error": "\(error)"])
            }
        }
    }

    /// Upgrades queued for this node's devices that no bus event announced (an administrator's
    /// job runs in its own process): looked for every few seconds, until cancelled.
    private func offerQueuedUpgrades() async {
        let store = UpgradeStore(ledger.database)
        while !Task.isCancelled {
            do {
                for command in try await store.queued(onNode: nodeID, now: Clock.unixMilliseconds(), limit: 500) { try await delivery.send(command) }
            } catch {
                logger.warning("queued upgrades could not be offered", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(3))
        }
    }

    /// An app's message for one of a device's custom topics, if this node holds the device:
    /// published into the broker, so that it reaches the device only through a subscription
    /// of its own (as on Aliyun), and only on a class it may receive.
    private func publishToDevice(did: String, topic: String, payloadHex: String, qos: Int) async throws {
        guard try await connections.route(did) != nil else { return }
        let payload = ByteBuffer(bytes: [UInt8](tetherHex: payloadHex) ?? [])
        broker.publish(MQTTMessage(topic: topic, payload: payload, qos: qos == 0 ? .atMostOnce : .atLeastOnce))
    }

    /// At shutdown: the devices this node held are offline, and the node is gone.
    private func leave() async {
        do {
            try await presence.leave()
            try await housekeeping.leave()
        } catch {
            logger.warning("could not record the gateway's devices as offline", metadata: ["error": "\(error)"])
        }
        presenceChanges.finish()
        uplinks.finish()
        credentialLookups.finish()
    }
}

public import Logging
public import NIOCore
import NIOSSL
import Synchronization
public import ServiceLifecycle
import TetherAlink
import TetherCore
public import TetherMQTT

/// The MQTT gateway devices connect to: an embedded broker that authenticates devices by the
/// Alink signing schemes, keeps each on its own topics, stores what they report, answers their
/// posts, tracks whether they are online, and delivers the command ledger's commands to the
/// devices connected to this node.
public final class DeviceGateway: Service, Sendable {
    public let broker: MQTTBroker
    let configuration: GatewayConfiguration
    let bindAddress: String
    let database: any SQLDatabase
    let bus: any ClusterBus
    let ledger: CommandLedger
    let history: DeviceHistory
    let catalogue: DeviceCatalogue
    let metrics: CloudMetrics
    let logger: Logger
    private let presence: (stream: AsyncStream<PresenceChange>, continuation: AsyncStream<PresenceChange>.Continuation)
    let uplinks = UplinkQueue<Uplink>(capacity: 50_000)
    /// When each device connected to this node, for telling stale cluster events from new ones.
    let localConnections = Mutex<[String: Int64]>([:])
    /// Devices this node sent attrs commands to whose reports may show them applied.
    let awaitingApplication = Mutex<Set<String>>([])

    struct Uplink: Sendable {
        var message: MQTTMessage
        var publisher: MQTTPrincipal
    }

    public init(configuration: GatewayConfiguration, bindAddress: String, database: any SQLDatabase, bus: any ClusterBus, metrics: CloudMetrics = CloudMetrics(), logger: Logger) {
        self.configuration = configuration
        self.bindAddress = bindAddress
        self.database = database
        self.bus = bus
        self.ledger = CommandLedger(database: database)
        self.history = DeviceHistory(database: database)
        self.catalogue = DeviceCatalogue(database: database)
        self.metrics = metrics
        self.logger = logger
        // Presence changes are a few bytes, two per connection: never dropped.
        presence = AsyncStream.makeStream(of: PresenceChange.self, bufferingPolicy: .unbounded)
        let authenticator = DeviceAuthenticator(database: database, configuration: configuration, logger: logger)
        var brokerConfiguration = MQTTBrokerConfiguration()
        brokerConfiguration.maximumQoS = .atLeastOnce
        self.broker = MQTTBroker(
            configuration: brokerConfiguration,
            hooks: GatewayHooks(authenticator: authenticator, presence: presence.continuation),
            logger: logger
        )
    }

    /// The addresses the gateway listens on, once it does.
    public func addresses() async throws -> [SocketAddress] { try await broker.addresses() }

    var nodeID: String { configuration.nodeID }

    public func run() async throws {
        try await heartbeat()
        var wanted: [MQTTListener] = []
        if let port = configuration.mqttPort { wanted.append(.tcp(host: bindAddress, port: port)) }
        if let port = configuration.tlsPort, let tls = configuration.tls {
            wanted.append(try .tls(host: bindAddress, port: port, configuration: tls))
        }
        let listeners = wanted
        let queue = uplinks
        let metrics = self.metrics
        let observation = try broker.observe("/sys/#") { [broker] message, publisher in
            // What the cloud itself sends down has no publisher. Beyond the queue's capacity the
            // newest messages are dropped (counted): devices see no reply and post again.
            guard let publisher else { return }
            guard !queue.push(Uplink(message: message, publisher: publisher)) else { return }
            metrics.uplinkDropped()
            // Answer what can be answered: a device SDK stops posting after enough requests
            // without a reply.
            Self.refuseBusy(message, publisher: publisher, broker: broker)
        }
        defer { observation.cancel() }
        let events = bus.events()
        try await resumeUnsentCommands()
        let announcement = Task { [broker, logger, nodeID] in
            guard let addresses = try? await broker.addresses() else { return }
            logger.notice("device gateway listening", metadata: ["addresses": "\(addresses.map { "\($0)" }.joined(separator: ", "))", "node": "\(nodeID)"])
        }
        defer { announcement.cancel() }
        // Graceful shutdown cancels the tasks below; the broker then closes its listeners.
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await self.broker.run(listeners: listeners)
                    } catch {
                        self.logger.error("the device gateway cannot listen", metadata: ["error": "\(error)"])
                    }
                }
                group.addTask { await self.processPresence() }
                group.addTask { await self.processUplinks() }
                group.addTask { await self.processClusterEvents(events) }
                group.addTask { await self.sweep() }
                await group.next()
                group.cancelAll()
            }
        }
        await leave()
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

    // MARK: Presence

    private func processPresence() async {
        for await change in presence.stream {
            // At shutdown, leave() records every device of this node as offline at once.
            if Task.isCancelled { return }
            guard let did = change.principal.attributes[DeviceAuthenticator.Attribute.did] else { continue }
            do {
                if change.principal.attributes[DeviceAuthenticator.Attribute.registration] != nil {
                    if change.connected { try await answerRegistration(change.principal, did: did) }
                } else if change.connected {
                    try await deviceConnected(did: did, change: change)
                } else if change.reason != .takenOver, !broker.isConnected(clientID: change.principal.clientID) {
                    try await deviceDisconnected(did: did, atMs: change.atMs, reason: change.reason)
                }
            } catch {
                logger.error("presence could not be recorded", metadata: ["did": "\(did)", "error": "\(error)"])
            }
        }
    }

    private func deviceConnected(did: String, change: PresenceChange) async throws {
        localConnections.withLock { $0[did] = change.atMs }
        // Only if nothing newer was recorded: another node may have seen the device since.
        let previous = try await database.first(
            """
            UPDATE devices SET is_online = 1, online_node = $2, online_changed_ms = $3, remote_address = $4,
                activated_ms = CASE WHEN activated_ms = 0 THEN $3 ELSE activated_ms END
            WHERE did = $1 AND online_changed_ms <= $3 RETURNING did
            """,
            .text(did), .text(nodeID), .int(change.atMs), .text(change.remoteAddress)
        )
        guard previous != nil else { return }
        try await history.log(did: did, kind: .online, atMs: change.atMs, ip: change.remoteAddress)
        await bus.publish(.presence(did: did, online: true, node: nodeID, atMs: change.atMs))
        logger.debug("device online", metadata: ["did": "\(did)", "remote": "\(change.remoteAddress)"])
        for command in try await ledger.resumable(did: did, now: Clock.unixMilliseconds(), answerTimeoutMs: configuration.answerTimeoutSeconds * 1000) {
            try await send(command)
        }
    }

    private func deviceDisconnected(did: String, atMs: Int64, reason: MQTTBrokerEvent.DisconnectReason?) async throws {
        localConnections.withLock { _ = $0.removeValue(forKey: did) }
        // Only if this node still holds it and nothing newer happened: the device may already
        // be online on another node.
        let changed = try await database.first(
            """
            UPDATE devices SET is_online = 0, online_changed_ms = $3
            WHERE did = $1 AND online_node = $2 AND is_online = 1 AND online_changed_ms <= $3 RETURNING did
            """,
            .text(did), .text(nodeID), .int(atMs)
        )
        guard changed != nil else { return }
        try await history.log(did: did, kind: .offline, atMs: atMs, body: .object(["reason": .string(reason?.rawValue ?? "")]))
        await bus.publish(.presence(did: did, online: false, node: nodeID, atMs: atMs))
        logger.debug("device offline", metadata: ["did": "\(did)", "reason": "\(reason?.rawValue ?? "")"])
    }

    /// Dynamic registration (§2.3): the device's secret on `/ext/register`; the device then
    /// disconnects and connects again with it.
    private func answerRegistration(_ principal: MQTTPrincipal, did: String) async throws {
        guard let row = try await database.first("SELECT product_key, device_name, device_secret FROM devices WHERE did = $1", .text(did)) else { return }
        let answer: JSONValue = [
            "productKey": .string(try row.text("product_key")), "deviceName": .string(try row.text("device_name")),
            "deviceSecret": .string(try row.text("device_secret")),
        ]
        broker.send(MQTTMessage(topic: "/ext/register", payload: answer.serialized(), qos: .atLeastOnce), toClientID: principal.clientID)
        logger.info("device registered itself", metadata: ["did": "\(did)"])
    }

    // MARK: Cluster

    private func processClusterEvents(_ events: AsyncStream<ClusterEvent>) async {
        for await event in events {
            do {
                switch event {
                case .deliver(let commandID, _):
                    if let command = try await ledger.find(commandID) { try await send(command) }
                case .presence(let did, true, let node?, let atMs) where node != nodeID:
                    // The device connected to another node after it connected here: the
                    // connection it left here is stale. (An older event says nothing.)
                    guard let local = localConnections.withLock({ $0[did] }), local < atMs else { break }
                    if let device = try await catalogue.device(did), broker.isConnected(clientID: device.clientID) {
                        broker.disconnect(clientID: device.clientID, reason: .administrativeAction)
                    }
                default:
                    break
                }
            } catch {
                logger.error("a cluster event could not be handled", metadata: ["did": "\(event.did)", "error": "\(error)"])
            }
        }
    }

    /// Sends a command to its device if this node holds the device's connection.
    func send(_ command: CommandRecord) async throws {
        guard let device = try await catalogue.device(command.did), broker.isConnected(clientID: device.clientID) else { return }
        let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
        let message: MQTTMessage
        switch command.kind {
        case .attrs:
            let model = try await catalogue.model(device.productKey)
            let params = model.alinkParams(try model.appWrite(command.attrs))
            let request = AlinkRequest(id: command.alinkID, method: "thing.service.property.set", params: params)
            message = MQTTMessage(topic: AlinkDeviceTopic(device: identity, topic: .propertySet).name, payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        case .service:
            let identifier = command.body["identifier"]?.stringValue ?? ""
            let request = AlinkRequest(id: command.alinkID, method: "thing.service.\(identifier)", params: command.body["params"] ?? .object([:]))
            message = MQTTMessage(topic: AlinkDeviceTopic(device: identity, topic: .service(identifier)).name, payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        case .raw:
            let bytes = [UInt8](tetherHex: command.body["raw"]?.stringValue ?? "") ?? []
            message = MQTTMessage(topic: AlinkDeviceTopic(device: identity, topic: .downRaw).name, payload: ByteBuffer(bytes: bytes), qos: .atLeastOnce)
        }
        let from: Set<CommandState> = command.kind == .attrs ? [.accepted, .queued, .sent] : [.accepted, .queued]
        guard let sent = try await ledger.move(command.id, from: from, to: .sent) else { return }
        if command.kind == .attrs { _ = awaitingApplication.withLock { $0.insert(command.did) } }
        guard broker.send(message, toClientID: device.clientID) else {
            if let failed = try await ledger.move(command.id, from: [.sent], to: .failed, message: "the device disconnected before the command was sent") {
                await bus.publish(.command(failed.update))
            }
            return
        }
        try await history.log(did: command.did, kind: .appToDevice, atMs: sent.sentMs ?? Clock.unixMilliseconds(), body: command.json, uid: command.uid, appID: command.appID, source: "client")
        await bus.publish(.command(sent.update))
    }

    // MARK: Housekeeping

    /// Commands another node (or this one, before a crash) accepted and never sent: whichever
    /// node holds their device sends them now. A device that connects later gets them then.
    private func resumeUnsentCommands() async throws {
        let unsent = try await ledger.unsent(now: Clock.unixMilliseconds(), answerTimeoutMs: configuration.answerTimeoutSeconds * 1000)
        guard !unsent.isEmpty else { return }
        logger.notice("resuming commands accepted and not sent", metadata: ["count": "\(unsent.count)"])
        await bus.publish(unsent.map { .deliver(commandID: $0.id, did: $0.did) })
    }

    private func heartbeat() async throws {
        try await database.query(
            "INSERT INTO cloud_nodes (node_id, heartbeat_ms) VALUES ($1, $2) ON CONFLICT (node_id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms",
            .text(nodeID), .int(Clock.unixMilliseconds())
        )
    }

    /// Every second: this node's heartbeat, expired commands, and the devices of nodes that
    /// stopped without saying so.
    private func sweep() async {
        var tick = 0
        while !Task.isCancelled {
            do {
                try await heartbeat()
                let now = Clock.unixMilliseconds()
                for expired in try await ledger.expire(now: now, answerTimeoutMs: configuration.answerTimeoutSeconds * 1000) {
                    await bus.publish(.command(expired.update))
                }
                if tick % 60 == 0 {
                    // Spilled cluster events are read within moments of their notification.
                    try await database.query("DELETE FROM cluster_spill WHERE created_ms < $1", .int(now - 300_000))
                }
                if tick % 5 == 0 {
                    let orphans = try await database.query(
                        """
                        UPDATE devices SET is_online = 0, online_changed_ms = $1
                        WHERE is_online = 1 AND (online_node IS NULL OR online_node NOT IN
                            (SELECT node_id FROM cloud_nodes WHERE heartbeat_ms >= $2))
                        RETURNING did
                        """,
                        .int(now), .int(now - configuration.nodeTimeoutSeconds * 1000)
                    )
                    for row in orphans {
                        let did = try row.text("did")
                        try await history.log(did: did, kind: .offline, atMs: now, body: ["reason": "node gone"])
                        await bus.publish(.presence(did: did, online: false, node: nil, atMs: now))
                    }
                }
            } catch {
                logger.warning("gateway housekeeping failed", metadata: ["error": "\(error)"])
            }
            tick += 1
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// At shutdown: the devices this node held are offline.
    private func leave() async {
        let now = Clock.unixMilliseconds()
        do {
            let rows = try await database.query(
                "UPDATE devices SET is_online = 0, online_changed_ms = $2 WHERE is_online = 1 AND online_node = $1 RETURNING did",
                .text(nodeID), .int(now)
            )
            for row in rows {
                let did = try row.text("did")
                try await history.log(did: did, kind: .offline, atMs: now, body: ["reason": "gateway stopped"])
                await bus.publish(.presence(did: did, online: false, node: nodeID, atMs: now))
            }
            try await database.query("DELETE FROM cloud_nodes WHERE node_id = $1", .text(nodeID))
        } catch {
            logger.warning("could not record the gateway's devices as offline", metadata: ["error": "\(error)"])
        }
        presence.continuation.finish()
        uplinks.finish()
    }
}

import Logging
import Synchronization
import TetherCore
import TetherMQTT

/// Which devices are connected to this node: recorded in the database (of two nodes that saw a
/// device, the later sighting wins), logged in the history, announced to the cluster.
final class DevicePresence: Sendable {
    let nodeID: String
    let broker: MQTTBroker
    let database: any SQLDatabase
    let history: DeviceHistory
    let catalogue: DeviceCatalogue
    let delivery: CommandDelivery
    let bus: any ClusterBus
    let subDevices: SubDeviceSessions
    let forwarding: DataForwarding
    let notices: DeviceNotices
    let rules: RuleEngine?
    let metrics: CloudMetrics
    let logger: Logger
    /// When each device connected to this node, for telling stale cluster events from new ones.
    private let localConnections = Mutex<[String: Int64]>([:])

    init(
        nodeID: String, broker: MQTTBroker, database: any SQLDatabase, history: DeviceHistory, catalogue: DeviceCatalogue, delivery: CommandDelivery,
        bus: any ClusterBus, subDevices: SubDeviceSessions, forwarding: DataForwarding, notices: DeviceNotices, rules: RuleEngine?, metrics: CloudMetrics,
        logger: Logger
    ) {
        self.metrics = metrics
        self.notices = notices
        self.rules = rules
        self.forwarding = forwarding
        self.subDevices = subDevices
        self.nodeID = nodeID
        self.broker = broker
        self.database = database
        self.history = history
        self.catalogue = catalogue
        self.delivery = delivery
        self.bus = bus
        self.logger = logger
    }

    var devices: DeviceStore { DeviceStore(database) }

    /// The broker's connections and disconnections, in order, until cancelled: recorded in
    /// batches (what has queued up while the last batch was written), so that a connect storm
    /// costs a few statements and one commit per batch, not two per device.
    func process(_ changes: BatchQueue<PresenceChange>, registration: DeviceSelfRegistration) async {
        while let batch = await changes.next(maximum: Self.batchSize) {
            // At shutdown, leave() records every device of this node as offline at once.
            if Task.isCancelled { return }
            var run: [Change] = []
            for change in batch {
                guard let connection = DevicePrincipal(change.principal) else { continue }
                let did = connection.did
                if let registering = connection.registration {
                    await record(run)
                    run = []
                    guard change.connected else { continue }
                    do {
                        try await registration.answer(registering, did: did, clientID: change.principal.clientID)
                    } catch {
                        logger.error("a self-registration could not be answered", metadata: ["did": "\(did)", "error": "\(error)"])
                    }
                } else if change.connected {
                    run.append(Change(did: did, atMs: change.atMs, kind: .online(remoteAddress: change.remoteAddress)))
                } else if change.reason != .takenOver, !broker.isConnected(clientID: change.principal.clientID) {
                    // A gateway's sub-devices go with it.
                    for sub in subDevices.end(gateway: change.principal.clientID) {
                        run.append(Change(did: sub, atMs: change.atMs, kind: .offline(reason: "gateway offline")))
                    }
                    run.append(Change(did: did, atMs: change.atMs, kind: .offline(reason: change.reason?.rawValue ?? "")))
                }
            }
            await record(run)
        }
    }

    static let batchSize = 1024

    /// A device connected to this node or left it, as recorded.
    struct Change: Sendable {
        enum Kind: Sendable {
            case online(remoteAddress: String)
            /// Why it left, for the history.
            case offline(reason: String)
        }

        var did: String
        var atMs: Int64
        var kind: Kind
        /// For an offline: when the connection it ends started here (filled in when recorded).
        var connectedAtMs: Int64?

        var isOnline: Bool {
            if case .online = kind { return true }
            return false
        }
    }

    /// A device (or a sub-device through its gateway) connected to this node.
    func connected(did: String, atMs: Int64, remoteAddress: String) async throws {
        try await recordThrowing([Change(did: did, atMs: atMs, kind: .online(remoteAddress: remoteAddress))])
    }

    /// A device (or a sub-device, `why` then says how) left this node.
    func disconnected(did: String, atMs: Int64, reason: MQTTBrokerEvent.DisconnectReason?, why: String? = nil) async throws {
        try await recordThrowing([Change(did: did, atMs: atMs, kind: .offline(reason: why ?? reason?.rawValue ?? ""))])
    }

    private func record(_ changes: [Change]) async {
        do {
            try await recordThrowing(changes)
        } catch {
            logger.error("presence could not be recorded", metadata: ["count": "\(changes.count)", "error": "\(error)"])
        }
    }

    /// Changes in the order they happened: the devices' rows and their history in one
    /// transaction, then, for those that changed anything, the cluster, forwarding, rules and
    /// notices, and the commands waiting for devices that came online.
    private func recordThrowing(_ changes: [Change]) async throws {
        guard !changes.isEmpty else { return }
        let changes = localConnections.withLock { connections in
            changes.map { change in
                var change = change
                if change.isOnline { connections[change.did] = change.atMs } else { change.connectedAtMs = connections.removeValue(forKey: change.did) }
                return change
            }
        }
        let nodeID = self.nodeID
        let recorded = try await database.transaction { transaction -> [Change] in
            let devices = DeviceStore(transaction)
            var recorded: [Change] = []
            // A statement sets each device once, so a device that came and went within the
            // batch starts a new round: its changes stay in order.
            for round in Self.rounds(changes) {
                let online = try await devices.markOnline(
                    round.compactMap { change in
                        guard case .online(let address) = change.kind else { return nil }
                        return DeviceStore.Sighting(did: change.did, atMs: change.atMs, remoteAddress: address)
                    }, node: nodeID)
                let offline = try await devices.markOffline(
                    round.filter { !$0.isOnline }.map { DeviceStore.Sighting(did: $0.did, atMs: $0.atMs, connectedAtMs: $0.connectedAtMs) }, node: nodeID)
                let changed = round.filter { $0.isOnline ? online.contains($0.did) : offline.contains($0.did) }
                try await DeviceHistory.log(
                    changed.map { change in
                        switch change.kind {
                        case .online(let address): DeviceHistory.Entry(did: change.did, kind: .online, atMs: change.atMs, ip: address)
                        case .offline(let reason): DeviceHistory.Entry(did: change.did, kind: .offline, atMs: change.atMs, body: ["reason": .string(reason)])
                        }
                    }, on: transaction)
                recorded += changed
            }
            return recorded
        }
        try await announce(recorded)
    }

    /// Recorded changes, to the cluster, forwarding, rules and notices; then the commands
    /// waiting for devices that came online.
    private func announce(_ recorded: [Change]) async throws {
        let cameOnline = recorded.filter(\.isOnline).map(\.did)
        metrics.presenceRecorded(online: cameOnline.count, offline: recorded.count - cameOnline.count)
        guard !recorded.isEmpty else { return }
        await bus.publish(recorded.map { .presence(did: $0.did, online: $0.isOnline, node: nodeID, atMs: $0.atMs) })
        await forwardPresence(recorded)
        for change in recorded {
            if !change.isOnline { await notices.offline(did: change.did) }
            await rules?.record(did: change.did, change.isOnline ? .online : .offline, body: ["at": .int(change.atMs)])
        }
        logger.debug("presence recorded", metadata: ["changes": "\(recorded.count)"])
        var seen = Set<String>()
        try await delivery.resume(dids: cameOnline.filter { seen.insert($0).inserted })
    }

    /// The changes cut into consecutive rounds in which no device appears twice.
    static func rounds(_ changes: [Change]) -> [[Change]] {
        var rounds: [[Change]] = []
        var current: [Change] = []
        var seen = Set<String>()
        for change in changes {
            if !seen.insert(change.did).inserted {
                rounds.append(current)
                current = []
                seen = [change.did]
            }
            current.append(change)
        }
        if !current.isEmpty { rounds.append(current) }
        return rounds
    }

    /// The changes, to the forwarders that take presence (a device lookup each, so only when
    /// some forwarder does: a connect storm would otherwise read every device once more).
    private func forwardPresence(_ changes: [Change]) async {
        guard await forwarding.isForwarding(.presence) else { return }
        var messages: [ForwardedMessage] = []
        for change in changes {
            guard let device = try? await catalogue.device(change.did) else { continue }
            messages.append(
                ForwardedMessage(
                    kind: .presence, productKey: device.productKey, deviceName: device.deviceName, did: change.did, topic: "",
                    payload: ["online": .bool(change.isOnline)], atMs: change.atMs))
        }
        await forwarding.forward(messages)
    }

    /// The device connected to another node at `atMs`: if that is after it connected here, the
    /// connection it left here is stale. (An older event says nothing.)
    func connectedElsewhere(did: String, atMs: Int64) async throws {
        guard let local = localConnections.withLock({ $0[did] }), local < atMs else { return }
        if let device = try await catalogue.device(did), broker.isConnected(clientID: device.clientID) {
            broker.disconnect(clientID: device.clientID, reason: .administrativeAction)
        }
    }

    /// After this node looked dead to the others (its heartbeat was late): the devices they
    /// swept offline that are still connected here are online again, unless they have
    /// connected elsewhere since. A connection that ended meanwhile ends again when its offline
    /// is recorded: the row then names this node and that connection.
    func reclaim() async throws {
        let held = localConnections.withLock { $0.map { DeviceStore.Sighting(did: $0.key, atMs: $0.value) } }
        guard !held.isEmpty else { return }
        let now = Clock.unixMilliseconds()
        let nodeID = self.nodeID
        let reclaimed = try await database.transaction { transaction in
            let dids = try await DeviceStore(transaction).reclaim(held, node: nodeID)
            try await DeviceHistory.log(
                dids.map { DeviceHistory.Entry(did: $0, kind: .online, atMs: now, body: ["reason": "node back"]) }, on: transaction)
            return dids
        }
        guard !reclaimed.isEmpty else { return }
        logger.warning("devices swept offline while this node looked dead are online again", metadata: ["count": "\(reclaimed.count)"])
        try await announce(reclaimed.map { Change(did: $0, atMs: now, kind: .online(remoteAddress: "")) })
    }

    /// At shutdown: the devices this node held are offline.
    func leave() async throws {
        try await markAllOffline(reason: "gateway stopped", take: false)
    }

    /// At start, before any device connects: what a previous process under this node's name
    /// left online is stale. It stopped without ``leave()`` (killed, or crashed) and came back
    /// before the other nodes thought it dead, so nobody else would ever clear those rows.
    func forgetPreviousProcess() async throws {
        try await markAllOffline(reason: "gateway restarted", take: true)
    }

    private func markAllOffline(reason: String, take: Bool) async throws {
        let now = Clock.unixMilliseconds()
        let nodeID = self.nodeID
        let dids = try await database.transaction { transaction in
            let dids = try await DeviceStore(transaction).markOffline(heldBy: nodeID)
            try await DeviceHistory.log(
                dids.map { DeviceHistory.Entry(did: $0, kind: .offline, atMs: now, body: ["reason": .string(reason)]) }, on: transaction)
            return dids
        }
        guard !dids.isEmpty else { return }
        metrics.presenceRecorded(online: 0, offline: dids.count)
        await bus.publish(dids.map { .presence(did: $0, online: false, node: nodeID, atMs: now) })
        for did in dids { await rules?.record(did: did, .offline, body: ["at": .int(now)], take: take) }
    }
}

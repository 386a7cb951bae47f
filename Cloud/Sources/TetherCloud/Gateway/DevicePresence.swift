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
    let logger: Logger
    /// When each device connected to this node, for telling stale cluster events from new ones.
    private let localConnections = Mutex<[String: Int64]>([:])

    init(
        nodeID: String, broker: MQTTBroker, database: any SQLDatabase, history: DeviceHistory, catalogue: DeviceCatalogue, delivery: CommandDelivery,
        bus: any ClusterBus, subDevices: SubDeviceSessions, forwarding: DataForwarding, notices: DeviceNotices, rules: RuleEngine?, logger: Logger
    ) {
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

    /// The broker's connections and disconnections, in order, until cancelled.
    func process(_ changes: AsyncStream<PresenceChange>, registration: DeviceSelfRegistration) async {
        for await change in changes {
            // At shutdown, leave() records every device of this node as offline at once.
            if Task.isCancelled { return }
            guard let did = change.principal.attributes[DeviceAuthenticator.Attribute.did] else { continue }
            do {
                if change.principal.attributes[DeviceAuthenticator.Attribute.registration] != nil {
                    if change.connected { try await registration.answer(change.principal, did: did) }
                } else if change.connected {
                    try await connected(did: did, atMs: change.atMs, remoteAddress: change.remoteAddress)
                } else if change.reason != .takenOver, !broker.isConnected(clientID: change.principal.clientID) {
                    // A gateway's sub-devices go with it.
                    for sub in subDevices.end(gateway: change.principal.clientID) {
                        try await disconnected(did: sub, atMs: change.atMs, reason: nil, why: "gateway offline")
                    }
                    try await disconnected(did: did, atMs: change.atMs, reason: change.reason)
                }
            } catch {
                logger.error("presence could not be recorded", metadata: ["did": "\(did)", "error": "\(error)"])
            }
        }
    }

    /// A device (or a sub-device through its gateway) connected to this node.
    func connected(did: String, atMs: Int64, remoteAddress: String) async throws {
        localConnections.withLock { $0[did] = atMs }
        guard try await devices.markOnline(did, node: nodeID, atMs: atMs, remoteAddress: remoteAddress) else { return }
        try await history.log(did: did, kind: .online, atMs: atMs, ip: remoteAddress)
        await bus.publish(.presence(did: did, online: true, node: nodeID, atMs: atMs))
        await forwardPresence(did: did, online: true, atMs: atMs)
        await rules?.record(did: did, .online, body: ["at": .int(atMs)])
        logger.debug("device online", metadata: ["did": "\(did)", "remote": "\(remoteAddress)"])
        try await delivery.resume(did: did)
    }

    /// A device (or a sub-device, `why` then says how) left this node.
    func disconnected(did: String, atMs: Int64, reason: MQTTBrokerEvent.DisconnectReason?, why: String? = nil) async throws {
        localConnections.withLock { _ = $0.removeValue(forKey: did) }
        guard try await devices.markOffline(did, node: nodeID, atMs: atMs) else { return }
        try await history.log(did: did, kind: .offline, atMs: atMs, body: .object(["reason": .string(why ?? reason?.rawValue ?? "")]))
        await bus.publish(.presence(did: did, online: false, node: nodeID, atMs: atMs))
        await forwardPresence(did: did, online: false, atMs: atMs)
        await notices.offline(did: did)
        await rules?.record(did: did, .offline, body: ["at": .int(atMs)])
        logger.debug("device offline", metadata: ["did": "\(did)", "reason": "\(reason?.rawValue ?? "")"])
    }

    private func forwardPresence(did: String, online: Bool, atMs: Int64) async {
        guard let device = try? await catalogue.device(did) else { return }
        await forwarding.forward([
            ForwardedMessage(
                kind: .presence, productKey: device.productKey, deviceName: device.deviceName, did: did, topic: "",
                payload: ["online": .bool(online)], atMs: atMs)
        ])
    }

    /// The device connected to another node at `atMs`: if that is after it connected here, the
    /// connection it left here is stale. (An older event says nothing.)
    func connectedElsewhere(did: String, atMs: Int64) async throws {
        guard let local = localConnections.withLock({ $0[did] }), local < atMs else { return }
        if let device = try await catalogue.device(did), broker.isConnected(clientID: device.clientID) {
            broker.disconnect(clientID: device.clientID, reason: .administrativeAction)
        }
    }

    /// At shutdown: the devices this node held are offline.
    func leave() async throws {
        let now = Clock.unixMilliseconds()
        for did in try await devices.markOffline(heldBy: nodeID, atMs: now) {
            try await history.log(did: did, kind: .offline, atMs: now, body: ["reason": "gateway stopped"])
            await bus.publish(.presence(did: did, online: false, node: nodeID, atMs: now))
            await rules?.record(did: did, .offline, body: ["at": .int(now)], take: false)
        }
    }
}

import DequeModule
import NIOConcurrencyHelpers
import NIOCore

/// A message waiting in a session: not yet sent (queued) or sent and not yet acknowledged.
struct PendingMessage {
    var message: MQTTMessage
    /// When a v5 message expiry runs out, if it has one.
    var deadline: NIODeadline?
    var subscriptionIdentifiers: [Int]
}

/// A session's outbound QoS 1/2 message awaiting its acknowledgement.
struct InflightMessage {
    enum Stage { case awaitingPubAck, awaitingPubRec, awaitingPubComp }
    var pending: PendingMessage
    var stage: Stage
}

/// One client's session: its subscriptions, its queue and in-flight window, and its connection
/// while it has one. Its mutable state is guarded by `lock`; the broker's own lock is never
/// taken while holding it.
final class BrokerSession: @unchecked Sendable {
    let clientID: String
    let lock = InlineLock()

    // Guarded by `lock`:
    var version: MQTTVersion
    var principal: MQTTPrincipal
    var connection: BrokerConnectionReference?
    /// Full filters (with `$share/…`) → options and identifier.
    var subscriptions = SessionSubscriptions()
    /// The scope under which the session holds the server-side templates, if it does.
    var scopeKey: String?
    var queue = Deque<PendingMessage>()
    var inflight: [UInt16: InflightMessage] = [:]
    var inflightOrder = Deque<UInt16>()
    var nextPacketID: UInt16 = 1
    /// QoS 2 packet identifiers received and not yet released (exactly-once delivery).
    var inboundQoS2: Set<UInt16> = []
    /// Seconds the session outlives its connection; nil: no limit (a 3.1.1 persistent session).
    var expiryInterval: UInt32?
    /// Ends with its connection (clean session, or v5 expiry 0).
    var endsWithConnection: Bool
    /// The session's expiry once its connection is gone.
    var expiryTask: Scheduled<Void>? {
        get { offlineTimers?.expiry }
        set { updateTimers { $0.expiry = newValue } }
    }
    /// A will waiting out its v5 delay.
    var pendingWill: Scheduled<Void>? {
        get { offlineTimers?.will }
        set { updateTimers { $0.will = newValue } }
    }
    /// Boxed: most sessions never have either timer, and every session would carry their size.
    private final class OfflineTimers {
        var expiry: Scheduled<Void>?
        var will: Scheduled<Void>?
    }
    private var offlineTimers: OfflineTimers?
    /// The box exists while a timer does.
    private func updateTimers(_ change: (OfflineTimers) -> Void) {
        let timers = offlineTimers ?? OfflineTimers()
        change(timers)
        offlineTimers = timers.expiry == nil && timers.will == nil ? nil : timers
    }
    /// The in-flight window towards the client (v5 Receive Maximum, bounded by configuration).
    var maximumInflight: Int
    /// Packet size limit the client asked for (v5). Set before the session is shared.
    var maximumPacketSize: Int?
    /// Read without the lock by the connection's own event loop, which is the only writer
    /// once the session is attached.
    var maximumPacketSizeUnlocked: Int? { maximumPacketSize }
    /// Whether the connection's socket takes more data: while it does not, messages wait in the
    /// bounded queue (QoS 0 ones are dropped first when it overflows) instead of piling up in
    /// the socket's buffer without limit.
    var connectionWritable = true
    /// Publishers paused because this session could not take their messages; resumed when it
    /// drains (backpressure from a slow subscriber to its publishers).
    var pausedPublishers: [BrokerConnectionReference] = []
    /// A drain has been asked of the connection and has not run yet.
    var drainScheduled = false

    /// Whether the session is backed up: its socket is full and messages are waiting.
    var isCongested: Bool { connection != nil && queue.count >= Self.congestionThreshold }
    static let congestionThreshold = 256
    /// Internal subscribers (embedders) get messages through this instead of a connection.
    let sink: (@Sendable (MQTTMessage, _ publisher: MQTTPrincipal?) -> Void)?

    init(
        clientID: String, version: MQTTVersion, principal: MQTTPrincipal, endsWithConnection: Bool, expiryInterval: UInt32?, maximumInflight: Int,
        sink: (@Sendable (MQTTMessage, _ publisher: MQTTPrincipal?) -> Void)? = nil
    ) {
        self.clientID = clientID
        self.version = version
        self.principal = principal
        self.endsWithConnection = endsWithConnection
        self.expiryInterval = expiryInterval
        self.maximumInflight = maximumInflight
        self.sink = sink
    }

    /// A packet identifier not in use by the in-flight window.
    func allocatePacketID() -> UInt16 {
        while inflight[nextPacketID] != nil || nextPacketID == 0 { nextPacketID &+= 1 }
        let id = nextPacketID
        nextPacketID &+= 1
        return id
    }

    /// The PUBLISH for an outbound message, or nil when it expired.
    func publishPacket(for pending: PendingMessage, packetID: UInt16?, dup: Bool, now: NIODeadline) -> MQTTPublish? {
        if version != .v5 {
            if let deadline = pending.deadline, deadline <= now { return nil }
            return MQTTPublish(
                topic: pending.message.topic, payload: pending.message.payload, qos: pending.message.qos, retain: pending.message.retain, dup: dup,
                packetID: packetID)
        }
        var properties = pending.message.properties
        if properties.isEmpty, pending.deadline == nil, pending.subscriptionIdentifiers.isEmpty {
            return MQTTPublish(
                topic: pending.message.topic, payload: pending.message.payload, qos: pending.message.qos, retain: pending.message.retain, dup: dup,
                packetID: packetID)
        }
        if let deadline = pending.deadline {
            guard deadline > now else { return nil }
            // Forward the remaining lifetime, as MQTT 5 §3.3.2.3.3 asks.
            let remaining = UInt32(max(1, (deadline - now).nanoseconds / 1_000_000_000))
            properties.list.removeAll { if case .messageExpiryInterval = $0 { true } else { false } }
            properties.list.append(.messageExpiryInterval(remaining))
        }
        properties.list.removeAll { if case .subscriptionIdentifier = $0 { true } else { false } }
        properties.list.removeAll { if case .topicAlias = $0 { true } else { false } }
        for identifier in pending.subscriptionIdentifiers { properties.list.append(.subscriptionIdentifier(identifier)) }
        return MQTTPublish(
            topic: pending.message.topic, payload: pending.message.payload, qos: pending.message.qos,
            retain: pending.message.retain, dup: dup, packetID: packetID, properties: version == .v5 ? properties : []
        )
    }

    /// Moves queued messages into the in-flight window while it has room; returns the packets to
    /// send. Call with `lock` held.
    func drainQueue(now: NIODeadline) -> [MQTTPacket] {
        var packets: [MQTTPacket] = []
        while connectionWritable, let next = queue.first {
            if next.message.qos != .atMostOnce, inflight.count >= maximumInflight { break }
            queue.removeFirst()
            if next.message.qos == .atMostOnce {
                if let publish = publishPacket(for: next, packetID: nil, dup: false, now: now) { packets.append(.publish(publish)) }
                continue
            }
            let id = allocatePacketID()
            guard let publish = publishPacket(for: next, packetID: id, dup: false, now: now) else { continue }
            inflight[id] = InflightMessage(pending: next, stage: next.message.qos == .atLeastOnce ? .awaitingPubAck : .awaitingPubRec)
            inflightOrder.append(id)
            packets.append(.publish(publish))
        }
        // A device gets a message now and then: an emptied queue lets go of its storage rather
        // than keep it for the connection's life (a gateway holds tens of thousands).
        if queue.isEmpty { queue = [] }
        return packets
    }

    /// What to resend when a persistent session reconnects: unacknowledged PUBLISH with DUP,
    /// PUBREL for messages already received. Call with `lock` held.
    func redeliveries(now: NIODeadline) -> [MQTTPacket] {
        var packets: [MQTTPacket] = []
        for id in inflightOrder {
            guard let entry = inflight[id] else { continue }
            switch entry.stage {
            case .awaitingPubAck, .awaitingPubRec:
                if let publish = publishPacket(for: entry.pending, packetID: id, dup: true, now: now) { packets.append(.publish(publish)) }
            case .awaitingPubComp:
                packets.append(.pubrel(MQTTAck(packetID: id)))
            }
        }
        return packets
    }

    func removeInflight(_ id: UInt16) {
        inflight[id] = nil
        if let index = inflightOrder.firstIndex(of: id) { inflightOrder.remove(at: index) }
        // As for the queue: an empty window keeps no storage (about 260 bytes per device).
        if inflight.isEmpty {
            inflight = [:]
            inflightOrder = []
        }
    }

    /// The state to store for a persistent session. Call with `lock` held.
    func stored() -> MQTTStoredSession {
        let pending = inflightOrder.compactMap { inflight[$0]?.pending.message } + queue.map(\.message)
        var options: [MQTTTopicSubscription] = []
        var identifiers: [String: Int] = [:]
        for entry in subscriptions.all.sorted(by: { $0.options.filter < $1.options.filter }) {
            options.append(entry.options)
            if let identifier = entry.identifier { identifiers[entry.options.filter] = identifier }
        }
        return MQTTStoredSession(
            clientID: clientID, version: version, subscriptions: options, subscriptionIdentifiers: identifiers,
            expiryInterval: expiryInterval, pendingMessages: pending, username: principal.username
        )
    }
}

/// A session in the topic tree, hashed by identity.
struct SessionKey: Hashable {
    let session: BrokerSession
    static func == (lhs: SessionKey, rhs: SessionKey) -> Bool { lhs.session === rhs.session }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(session)) }
}

import DequeModule
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Synchronization
import TetherCore

/// What the broker shares between connections: sessions, the topic tree and retained messages,
/// behind one lock that is held only for lookups and updates, never during I/O or callbacks.
final class BrokerCore: Sendable {
    let configuration: MQTTBrokerConfiguration
    let hooks: any MQTTBrokerHooks
    /// ``MQTTBrokerHooks/checksDeliveries``, read once.
    let checksDeliveries: Bool
    let persistence: any MQTTBrokerPersistence
    let logger: Logger
    let events = Broadcast<MQTTBrokerEvent>(bufferSize: 4096)
    let keepAliveSweepers = KeepAliveSweepers()

    /// Only touched with `state`'s lock held, which is what makes it safe to share.
    struct State: @unchecked Sendable {
        var sessions: [String: BrokerSession] = [:]
        var tree = TopicTree<SessionKey>()
        var retained: [String: MQTTMessage] = [:]
        var connections = 0
        var internalSubscribers = 0
    }

    let state = NIOLockedValueBox(State())
    /// Connection handlers in memory, open or not: back to zero once every connection closed
    /// (a handler kept alive after its connection is a leak per reconnecting device).
    let connectionHandlersInMemory = Atomic<Int>(0)

    init(configuration: MQTTBrokerConfiguration, hooks: any MQTTBrokerHooks, persistence: any MQTTBrokerPersistence, logger: Logger) {
        self.configuration = configuration
        self.hooks = hooks
        self.checksDeliveries = hooks.checksDeliveries
        self.persistence = persistence
        self.logger = logger
        let templates = hooks.serverSideTemplates
        if !templates.isEmpty {
            state.withLockedValue { $0.tree.setTemplates(templates, maximumQoS: configuration.maximumQoS) }
        }
    }

    // MARK: Sessions

    struct OpenedSession {
        let session: BrokerSession
        let sessionPresent: Bool
        /// A connection of the same client id, to be closed (session takeover).
        let replaced: BrokerConnectionReference?
    }

    /// Attaches a connection to its session: a new one, or the existing one when the client asked
    /// to resume it. A connection that already held the session is returned for takeover.
    /// Nil when the client id holds a session of another user: sessions, and the connections
    /// holding them, are taken over, resumed or ended by their own user only.
    func openSession(connect: MQTTConnect, clientID: String, principal: MQTTPrincipal, connection: BrokerConnectionReference) -> OpenedSession? {
        let v5 = connect.version == .v5
        let expiry: UInt32? = v5 ? min(connect.properties.sessionExpiryInterval ?? 0, configuration.maximumSessionExpiry) : (connect.cleanStart ? 0 : nil)
        let endsWithConnection = expiry == 0
        let inflightLimit = min(configuration.maximumInflightMessages, Int(connect.properties.receiveMaximum ?? UInt16.max))
        var discarded: BrokerSession?
        let opened = state.withLockedValue { state -> (BrokerSession, Bool, BrokerConnectionReference?)? in
            if let existing = state.sessions[clientID] {
                guard existing.lock.withLock({ existing.principal.username }) == principal.username else { return nil }
                let previous = existing.lock.withLock { () -> BrokerConnectionReference? in
                    defer { existing.connection = nil }
                    return existing.connection
                }
                if !connect.cleanStart {
                    existing.lock.withLock {
                        existing.connection = connection
                        existing.connectionWritable = true
                        existing.version = connect.version
                        existing.principal = principal
                        existing.expiryInterval = expiry
                        existing.endsWithConnection = endsWithConnection
                        existing.maximumInflight = inflightLimit
                        existing.maximumPacketSize = connect.properties.maximumPacketSize.map(Int.init)
                        existing.expiryTask?.cancel()
                        existing.expiryTask = nil
                        existing.pendingWill?.cancel()
                        existing.pendingWill = nil
                    }
                    return (existing, true, previous)
                }
                Self.removeSubscriptions(of: existing, from: &state)
                state.sessions[clientID] = nil
                discarded = existing
                let session = BrokerSession(
                    clientID: clientID, version: connect.version, principal: principal, endsWithConnection: endsWithConnection, expiryInterval: expiry,
                    maximumInflight: inflightLimit)
                session.connection = connection
                session.maximumPacketSize = connect.properties.maximumPacketSize.map(Int.init)
                state.sessions[clientID] = session
                return (session, false, previous)
            }
            let session = BrokerSession(
                clientID: clientID, version: connect.version, principal: principal, endsWithConnection: endsWithConnection, expiryInterval: expiry,
                maximumInflight: inflightLimit)
            session.connection = connection
            session.maximumPacketSize = connect.properties.maximumPacketSize.map(Int.init)
            state.sessions[clientID] = session
            return (session, false, nil)
        }
        guard let (session, present, replaced) = opened else { return nil }
        if let discarded {
            discarded.lock.withLock {
                discarded.expiryTask?.cancel()
                discarded.pendingWill?.cancel()
            }
            persistence.deleteSession(clientID: clientID)
        }
        if !endsWithConnection { persistence.saveSession(session.lock.withLock { session.stored() }) }
        return OpenedSession(session: session, sessionPresent: present, replaced: replaced)
    }

    /// A connection ended. Detaches it from its session (unless another connection took it over),
    /// ends or keeps the session, and publishes the will when there is one.
    /// Returns whether the connection still held its session.
    @discardableResult
    func connectionClosed(session: BrokerSession, connection: BrokerConnectionReference, will: MQTTWill?, eventLoop: any EventLoop) -> Bool {
        let (stillOwner, endsNow, expiry, waiting) = session.lock.withLock { () -> (Bool, Bool, UInt32?, [BrokerConnectionReference]) in
            guard connection.isSame(as: session.connection) else { return (false, false, nil, []) }
            session.connection = nil
            // Taken in the same step as the connection: a publisher paused after this would
            // wait on an offline session (and be kept in memory by it).
            defer { session.pausedPublishers = [] }
            return (true, session.endsWithConnection, session.expiryInterval, session.pausedPublishers)
        }
        // Publishers waiting for this subscriber to drain must not wait for a connection that is gone.
        for publisher in waiting { publisher.resumeReading() }
        if let will { scheduleWill(will, of: session, expiry: stillOwner ? expiry : nil, eventLoop: eventLoop) }
        guard stillOwner else { return false }
        if endsNow {
            endSession(session)
            return true
        }
        persistence.saveSession(session.lock.withLock { session.stored() })
        if let expiry, expiry < UInt32.max {
            let task = eventLoop.scheduleTask(in: .seconds(Int64(expiry))) { [self] in
                let offline = session.lock.withLock { session.connection == nil }
                if offline { endSession(session) }
            }
            session.lock.withLock { session.expiryTask = task }
        }
        return true
    }

    private func scheduleWill(_ will: MQTTWill, of session: BrokerSession, expiry: UInt32?, eventLoop: any EventLoop) {
        let delay = min(will.properties.willDelayInterval ?? 0, expiry ?? 0)
        let message = MQTTMessage(
            topic: will.topic, payload: will.payload, qos: will.qos, retain: will.retain, properties: will.properties.filteringWillDelay())
        let principal = session.lock.withLock { session.principal }
        guard hooks.authorizePublish(principal, topic: will.topic) else { return }
        guard delay > 0 else {
            publish(message, from: nil)
            return
        }
        // Sent after the delay unless the client comes back first (its session then cancels it).
        let task = eventLoop.scheduleTask(in: .seconds(Int64(delay))) { [self] in
            let stillAway = session.lock.withLock { session.connection == nil }
            if stillAway { publish(message, from: nil) }
        }
        session.lock.withLock { session.pendingWill = task }
    }

    func endSession(_ session: BrokerSession) {
        let removed = state.withLockedValue { state -> Bool in
            guard state.sessions[session.clientID] === session else { return false }
            Self.removeSubscriptions(of: session, from: &state)
            state.sessions[session.clientID] = nil
            return true
        }
        session.lock.withLock {
            session.expiryTask?.cancel()
            session.queue.removeAll()
            session.inflight.removeAll()
            session.inflightOrder.removeAll()
        }
        if removed { persistence.deleteSession(clientID: session.clientID) }
    }

    private static func removeSubscriptions(of session: BrokerSession, from state: inout State) {
        let (filters, scopeKey) = session.lock.withLock { (session.subscriptions.filters, session.scopeKey) }
        for filter in filters { state.tree.remove(SessionKey(session: session), filter: filter) }
        if let scopeKey { state.tree.unbind(SessionKey(session: session), scope: scopeKey) }
    }

    /// Restores stored sessions and retained messages (at start-up).
    func restore(sessions: [MQTTStoredSession], retained: [MQTTMessage]) {
        state.withLockedValue { state in
            for message in retained { state.retained[message.topic] = message }
            for stored in sessions {
                let session = BrokerSession(
                    clientID: stored.clientID, version: stored.version, principal: MQTTPrincipal(clientID: stored.clientID, username: stored.username),
                    endsWithConnection: false, expiryInterval: stored.expiryInterval, maximumInflight: configuration.maximumInflightMessages
                )
                for subscription in stored.subscriptions {
                    let identifier = stored.subscriptionIdentifiers[subscription.filter]
                    session.subscriptions.update(subscription, identifier: identifier)
                    state.tree.insert(SessionKey(session: session), options: subscription, identifier: identifier)
                }
                for message in stored.pendingMessages { session.queue.append(PendingMessage(message: message, deadline: nil, subscriptionIdentifiers: [])) }
                state.sessions[stored.clientID] = session
            }
        }
    }

    // MARK: Subscriptions

    /// Adds subscriptions for a session; returns a reason code per filter and the retained
    /// messages to send.
    func subscribe(
        _ session: BrokerSession, _ subscriptions: [MQTTTopicSubscription], identifier: Int?
    ) -> (codes: [MQTTReasonCode], retained: [PendingMessage]) {
        let principal = session.lock.withLock { session.principal }
        var codes: [MQTTReasonCode] = []
        var retained: [PendingMessage] = []
        var changed = false
        for var subscription in subscriptions {
            guard hooks.authorizeSubscribe(principal, filter: subscription.filter) else {
                codes.append(session.lock.withLock { session.version } == .v5 && configuration.revealsRefusalReason ? .notAuthorized : .unspecifiedError)
                continue
            }
            subscription.qos = min(subscription.qos, configuration.maximumQoS)
            let shared = MQTTTopic.sharedSubscription(subscription.filter) != nil
            let isNew = state.withLockedValue { state -> Bool in
                state.tree.insert(SessionKey(session: session), options: subscription, identifier: identifier)
            }
            let existed = session.lock.withLock { session.subscriptions.update(subscription, identifier: identifier) }
            changed = true
            codes.append(MQTTReasonCode(rawValue: subscription.qos.rawValue))
            let sendRetained =
                !shared && (subscription.retainHandling == .sendOnSubscribe || (subscription.retainHandling == .sendOnNewSubscribe && !existed && isNew))
            if sendRetained {
                retained += retainedMessages(matching: subscription.filter, qos: subscription.qos, identifier: identifier, for: principal)
            }
        }
        if changed { saveIfPersistent(session) }
        return (codes, retained)
    }

    /// The session holds the server-side templates under `scope` (its values) from now on;
    /// returns the retained messages they match. Nothing when the broker has no templates or
    /// the values cannot stand in a topic.
    func bindScope(_ session: BrokerSession, _ scope: [String]) -> [PendingMessage] {
        let key = SessionKey(session: session)
        let filters = state.withLockedValue { state -> [(filter: String, qos: MQTTQoS)] in
            guard let scope = state.tree.scoped.key(scope) else { return [] }
            let previous = session.lock.withLock { () -> String? in
                defer { session.scopeKey = scope }
                return session.scopeKey
            }
            if let previous, previous != scope { state.tree.unbind(key, scope: previous) }
            state.tree.bind(key, scope: scope)
            // The concrete filters only matter for retained messages, which a gateway rarely has.
            return state.retained.isEmpty ? [] : state.tree.scoped.filters(key: scope).map { ($0.filter, $0.entry.qos) }
        }
        guard !filters.isEmpty else { return [] }
        let principal = session.lock.withLock { session.principal }
        return filters.flatMap { retainedMessages(matching: $0.filter, qos: $0.qos, identifier: nil, for: principal) }
    }

    /// The retained messages a new subscription to `filter` gets.
    private func retainedMessages(matching filter: String, qos: MQTTQoS, identifier: Int?, for principal: MQTTPrincipal) -> [PendingMessage] {
        let matching = state.withLockedValue { state in
            state.retained.values.filter { MQTTTopic.matches(filter: filter, topic: $0.topic) }
        }
        var retained: [PendingMessage] = []
        for var message in matching.sorted(by: { $0.topic < $1.topic }) {
            if checksDeliveries, !hooks.authorizeDelivery(principal, topic: message.topic) { continue }
            message.qos = min(message.qos, qos)
            message.retain = true
            retained.append(PendingMessage(message: message, deadline: nil, subscriptionIdentifiers: identifier.map { [$0] } ?? []))
        }
        return retained
    }

    func unsubscribe(_ session: BrokerSession, _ filters: [String]) -> [MQTTReasonCode] {
        var codes: [MQTTReasonCode] = []
        for filter in filters {
            let existed = session.lock.withLock { session.subscriptions.remove(filter) }
            state.withLockedValue { state in _ = state.tree.remove(SessionKey(session: session), filter: filter) }
            codes.append(existed ? .success : .noSubscriptionExisted)
        }
        saveIfPersistent(session)
        return codes
    }

    private func saveIfPersistent(_ session: BrokerSession) {
        let snapshot = session.lock.withLock { session.endsWithConnection ? nil : session.stored() }
        if let snapshot { persistence.saveSession(snapshot) }
    }

    // MARK: Routing

    /// Stores or clears a retained message.
    func retain(_ message: MQTTMessage) {
        let stored: MQTTMessage? = message.payload.readableBytes == 0 ? nil : message
        state.withLockedValue { state in state.retained[message.topic] = stored }
        persistence.saveRetained(topic: message.topic, message: stored)
    }

    /// A message on its way to one session, decided but not yet queued.
    struct Delivery {
        let session: BrokerSession
        let pending: PendingMessage
    }

    /// Delivers a message to every matching subscription now; returns how many sessions got it.
    @discardableResult
    func publish(_ message: MQTTMessage, from publisher: BrokerSession?) -> Int {
        var deliveries: [Delivery] = []
        let count = route(message, from: publisher, into: &deliveries)
        commit(deliveries, pausing: nil)
        return count
    }

    /// Decides who gets a message (`publisher` is the sending session, for v5 No Local) and adds
    /// one delivery per session to `deliveries`; returns how many sessions that is. Nothing is
    /// queued until ``commit(_:pausing:)``, so that a connection can queue what one read brought
    /// in with one lock and one wake-up per subscriber.
    func route(_ message: MQTTMessage, from publisher: BrokerSession?, into deliveries: inout [Delivery]) -> Int {
        if message.retain { retain(message) }
        let matches = state.withLockedValue { state in state.tree.matches(message.topic) }
        guard !matches.isEmpty else { return 0 }
        let deadline = message.properties.messageExpiryInterval.map { NIODeadline.now() + .seconds(Int64($0)) }
        if matches.count == 1 {
            let match = matches[0]
            if match.noLocal, match.subscriber.session === publisher { return 0 }
            deliver(
                message, to: match.subscriber.session, from: publisher, qos: min(message.qos, match.qos), retainAsPublished: match.retainAsPublished,
                identifiers: match.identifier.map { [$0] } ?? [], deadline: deadline, into: &deliveries)
            return 1
        }
        // A session with several matching subscriptions gets the message once, at the highest QoS.
        var merged: [ObjectIdentifier: (BrokerSession, MQTTQoS, Bool, [Int])] = [:]
        var order: [ObjectIdentifier] = []
        for match in matches {
            let session = match.subscriber.session
            if match.noLocal, session === publisher { continue }
            let key = ObjectIdentifier(session)
            let qos = min(message.qos, match.qos)
            if var existing = merged[key] {
                existing.1 = max(existing.1, qos)
                existing.2 = existing.2 || match.retainAsPublished
                if let identifier = match.identifier { existing.3.append(identifier) }
                merged[key] = existing
            } else {
                merged[key] = (session, qos, match.retainAsPublished, match.identifier.map { [$0] } ?? [])
                order.append(key)
            }
        }
        for key in order {
            let (session, qos, retainAsPublished, identifiers) = merged[key]!
            deliver(
                message, to: session, from: publisher, qos: qos, retainAsPublished: retainAsPublished, identifiers: identifiers, deadline: deadline,
                into: &deliveries)
        }
        return order.count
    }

    /// `addressed`: the embedder sends to this client by name (``send(_:toClientID:)``), not
    /// through a subscription, so the read check does not apply.
    private func deliver(
        _ message: MQTTMessage, to session: BrokerSession, from publisher: BrokerSession?, qos: MQTTQoS, retainAsPublished: Bool, identifiers: [Int],
        deadline: NIODeadline?, addressed: Bool = false, into deliveries: inout [Delivery]
    ) {
        var outgoing = message
        outgoing.qos = qos
        outgoing.retain = retainAsPublished && message.retain
        if let sink = session.sink {
            sink(outgoing, publisher.map { publisher in publisher.lock.withLock { publisher.principal } })
            return
        }
        if checksDeliveries, !addressed, !hooks.authorizeDelivery(session.lock.withLock({ session.principal }), topic: message.topic) { return }
        deliveries.append(Delivery(session: session, pending: PendingMessage(message: outgoing, deadline: deadline, subscriptionIdentifiers: identifiers)))
    }

    /// Queues deliveries, one lock and at most one drain request per session. A congested
    /// session pauses the `publisher` connection (backpressure). Sessions without a connection
    /// keep what a persistent session must keep and drop the rest.
    func commit(_ deliveries: [Delivery], pausing publisher: BrokerConnectionReference?) {
        var index = 0
        while index < deliveries.count {
            let session = deliveries[index].session
            var end = index + 1
            while end < deliveries.count, deliveries[end].session === session { end += 1 }
            commit(deliveries[index..<end], to: session, pausing: publisher)
            index = end
        }
    }

    private func commit(_ batch: ArraySlice<Delivery>, to session: BrokerSession, pausing publisher: BrokerConnectionReference?) {
        var snapshot: MQTTStoredSession?
        let connection = session.lock.withLock { () -> BrokerConnectionReference? in
            guard let connection = session.connection else {
                guard !session.endsWithConnection else { return nil }
                for delivery in batch where delivery.pending.message.qos != .atMostOnce || configuration.queueQoS0Messages {
                    session.queue.append(delivery.pending)
                }
                while session.queue.count > configuration.maximumQueuedMessages { session.queue.removeFirst() }
                snapshot = session.stored()
                return nil
            }
            // Only appended here, whatever thread this is: the connection's own event loop moves
            // the queue to the socket while the socket takes it, so memory stays bounded.
            for delivery in batch { session.queue.append(delivery.pending) }
            while session.queue.count > configuration.maximumQueuedMessages { session.queue.removeFirst() }
            // A publisher resumed by its pause timer may be paused again while still listed.
            if let publisher, session.isCongested, publisher.pauseReading(), !session.pausedPublishers.contains(where: { $0 === publisher }) {
                session.pausedPublishers.append(publisher)
            }
            guard !session.drainScheduled else { return nil }
            session.drainScheduled = true
            return connection
        }
        if let snapshot { persistence.saveSession(snapshot) }
        connection?.drain()
    }

    /// Resends what a resumed session left unacknowledged, then what waited in its queue.
    func resume(_ session: BrokerSession) -> [MQTTPacket] {
        let now = NIODeadline.now()
        return session.lock.withLock { session.redeliveries(now: now) + session.drainQueue(now: now) }
    }

    /// Queues a message for one client's session, whatever it subscribed to; false when the
    /// broker has no session of that client id.
    func send(_ message: MQTTMessage, toClientID clientID: String) -> Bool {
        guard let session = state.withLockedValue({ $0.sessions[clientID] }) else { return false }
        var deliveries: [Delivery] = []
        deliver(message, to: session, from: nil, qos: message.qos, retainAsPublished: false, identifiers: [], deadline: nil, addressed: true, into: &deliveries)
        commit(deliveries, pausing: nil)
        return true
    }

    // MARK: Internal subscribers

    /// An in-process subscriber that gets every message matching `filter` at QoS 0 semantics.
    func addInternalSubscriber(filter: String, sink: @escaping @Sendable (MQTTMessage, _ publisher: MQTTPrincipal?) -> Void) -> BrokerSession {
        let session = state.withLockedValue { state -> BrokerSession in
            state.internalSubscribers += 1
            let session = BrokerSession(
                clientID: "$internal/\(state.internalSubscribers)", version: .v5, principal: MQTTPrincipal(clientID: "$internal"),
                endsWithConnection: true, expiryInterval: 0, maximumInflight: 0, sink: sink
            )
            let options = MQTTTopicSubscription(filter: filter, qos: .exactlyOnce, retainAsPublished: true)
            state.tree.insert(SessionKey(session: session), options: options)
            session.subscriptions.update(options, identifier: nil)
            return session
        }
        return session
    }

    func removeInternalSubscriber(_ session: BrokerSession) {
        state.withLockedValue { state in Self.removeSubscriptions(of: session, from: &state) }
    }
}

extension MQTTProperties {
    /// A will's properties as they go out on its message: without the will delay.
    func filteringWillDelay() -> MQTTProperties {
        MQTTProperties(list.filter { if case .willDelayInterval = $0 { false } else { true } })
    }
}

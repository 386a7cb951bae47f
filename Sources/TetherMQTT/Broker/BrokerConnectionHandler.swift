import Logging
import NIOConcurrencyHelpers
import NIOCore
import Synchronization
import TetherCore

/// The broker side of one client connection. Lives on the connection's event loop; the
/// protocol's rules are decided by its ``BrokerConnectionStateMachine``, shared state is reached
/// through ``BrokerCore``, and this handler carries out what they decide on the socket.
///
/// It decodes its own input, packet by packet, so that it can stop in the middle of what one
/// read brought in when a subscriber of its messages is congested (backpressure), and so that
/// packets are not boxed on their way through the pipeline.
final class BrokerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    // Every field here is paid for by every idle connection: what only some connections or
    // only the first moments of one need is boxed (memory per connection is a measured goal).
    private let core: BrokerCore
    private let isSecure: Bool
    private var context: ChannelHandlerContext?
    private var state = BrokerConnectionStateMachine()
    private var version: MQTTVersion { state.version }
    private var session: BrokerSession?
    private var principal: MQTTPrincipal?
    private var reference: BrokerConnectionReference?
    /// Topic aliases towards the client, once it accepts them (rare: boxed).
    private var aliases: OutgoingTopicAliases?
    private var flushScheduled = false
    private var connectTimeout: Scheduled<Void>?
    /// The authentication hook's call: the one task a connection owns, bridging the async hook
    /// into this event-loop handler; cancelled when the handler goes.
    private var authentication: Task<Void, Never>?
    /// Bytes received and not yet decoded.
    private var inbound: ByteBuffer?
    /// Deliveries routed from this client's publications, queued in batches (see ``commitDeliveries()``).
    private var outbox: [BrokerCore.Delivery] = []
    /// Keep-alive: the last time anything arrived, checked by the event loop's sweeper.
    private(set) var lastRead = NIODeadline.now()
    private var keepAliveSweeper: KeepAliveSweeper?
    /// Unknown until CONNECT.
    private var decodingVersion: MQTTVersion?

    private final class OutgoingTopicAliases {
        /// Defined by the broker, by topic.
        var outgoing: [String: UInt16] = [:]
        /// How many the broker may define: the client's Topic Alias Maximum, within the configuration's.
        var outgoingMaximum: UInt16 = 0
        /// The next alias to define (never reused: an alias the client may not know is not handed out again).
        var nextOutgoing = 1
    }

    init(core: BrokerCore, isSecure: Bool) {
        self.core = core
        self.isSecure = isSecure
        core.connectionHandlersInMemory.add(1, ordering: .relaxed)
    }

    deinit {
        core.connectionHandlersInMemory.subtract(1, ordering: .relaxed)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        reference = BrokerConnectionReference(handler: NIOLoopBound(self, eventLoop: context.eventLoop))
        let timeout = core.configuration.connectTimeout
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        connectTimeout = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            let handler = bound.value
            if let close = handler.state.connectTimeoutFired() { handler.carryOut(close) }
        }
        core.state.withLockedValue { $0.connections += 1 }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        authentication?.cancel()
        authentication = nil
        // The reference holds this handler: keeping it would keep both alive for good.
        reference = nil
    }

    /// The client's address, `ip:port`; asked for rarely (connect, logs), so not stored.
    private var remoteAddress: String {
        guard let address = context?.channel.remoteAddress else { return "unknown" }
        return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A closing connection's input is read (see ``lingeringClose``) and dropped.
        guard state.isOpen else { return }
        lastRead = .now()
        var bytes = unwrapInboundIn(data)
        if inbound == nil {
            inbound = bytes
        } else {
            inbound!.writeBuffer(&bytes)
        }
        processInbound()
    }

    /// Decodes and handles packets until the input runs out, the connection closes, or reading
    /// is paused.
    private func processInbound() {
        guard var buffer = inbound else { return }
        inbound = nil
        defer {
            commitDeliveries()
            if !state.isOpen {
                inbound = nil
            } else if buffer.readableBytes > 0 {
                if buffer.readerIndex > 65_536 { buffer.discardReadBytes() }
                inbound = buffer
            }
        }
        while !paused {
            guard state.isOpen else { return }
            let packet: MQTTPacket
            do {
                guard let next = try MQTTPacket.read(from: &buffer, version: decodingVersion, maximumPacketSize: core.configuration.maximumPacketSize) else {
                    return
                }
                packet = next
            } catch {
                return protocolFailure(error)
            }
            if decodingVersion == nil, case .connect(let connect) = packet { decodingVersion = connect.version }
            receive(packet)
            if outbox.count >= 64 { commitDeliveries() }
        }
    }

    /// Queues the deliveries routed so far; a congested subscriber may pause reading here.
    private func commitDeliveries() {
        guard !outbox.isEmpty else { return }
        let batch = outbox
        outbox.removeAll(keepingCapacity: true)
        core.commit(batch, pausing: reference)
    }

    private func receive(_ packet: MQTTPacket) {
        switch state.packetReceived(packet, configuration: core.configuration) {
        case .none:
            return
        case .authenticate(let connect):
            authenticate(connect)
        case .publish(let message, let qos, let packetID):
            guard let session else { return }
            publish(message, qos: qos, packetID: packetID, session: session)
        case .disconnect(let disconnect):
            guard let session else { return }
            let current = session.lock.withLock { session.expiryInterval }
            switch state.disconnectReceived(disconnect, sessionExpiry: current, configuration: core.configuration) {
            case .leave(let expiry, let close):
                if let expiry {
                    session.lock.withLock {
                        session.expiryInterval = expiry
                        session.endsWithConnection = expiry == 0
                    }
                }
                carryOut(close)
            case .close(let close):
                logProtocolError("session expiry set on DISCONNECT after CONNECT had 0")
                carryOut(close)
            case nil:
                return
            }
        case .session(let packet):
            guard let session else { return }
            handle(packet, session: session)
        case .close(let close):
            if close.finish.reason == .protocolError { logProtocolError("a \(packet.name) the protocol does not allow here") }
            carryOut(close)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? MQTTError else { return close(reason: nil) }
        protocolFailure(error)
    }

    private func protocolFailure(_ error: MQTTError) {
        logProtocolError("\(error)")
        if let close = state.decodingFailed(error) { carryOut(close) }
    }

    private func logProtocolError(_ what: String) {
        core.logger.debug("closing a client that broke the protocol", metadata: ["mqtt.client": "\(remoteAddress)", "mqtt.error": "\(what)"])
    }

    /// Nothing arrived for 1.5 × the client's keep-alive (called by the loop's sweeper).
    func keepAliveExpired() {
        if let close = state.keepAliveExpired() { carryOut(close) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        drainSession()
        context.fireChannelWritabilityChanged()
    }

    /// Moves the session's queue to the socket while the socket takes it; once the queue is
    /// short again, lets paused publishers read on.
    func drainSession() {
        guard let context, let session else { return }
        let writable = context.channel.isWritable
        let (packets, resumed) = session.lock.withLock { () -> ([MQTTPacket], [BrokerConnectionReference]) in
            session.drainScheduled = false
            session.connectionWritable = writable
            let packets = session.drainQueue(now: .now())
            guard !session.isCongested, !session.pausedPublishers.isEmpty else { return (packets, []) }
            defer { session.pausedPublishers = [] }
            return (packets, session.pausedPublishers)
        }
        write(packets)
        for publisher in resumed { publisher.resumeReading() }
    }

    /// Reading pauses while a subscriber of this client's messages is congested, until that
    /// subscriber drains or for at most `maximumPause`: a stuck subscriber slows its
    /// publishers down but never stalls them (its own queue then drops the oldest messages).
    private var paused = false
    /// Whether a pause's time limit is set and has not fired: a publisher paused and resumed
    /// many times a second (fan-in to a slow subscriber) keeps one timer, not one per pause.
    /// A pause that starts while it runs ends sooner than `maximumPause`, never later.
    private var pauseLimitSet = false
    private static let maximumPause = TimeAmount.milliseconds(100)

    func pauseReading() {
        guard let context, !paused else { return }
        paused = true
        setAutoRead(false, context: context)
        guard !pauseLimitSet else { return }
        pauseLimitSet = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: Self.maximumPause) {
            bound.value.pauseLimitSet = false
            bound.value.resumeReading()
        }
    }

    func resumeReading() {
        guard let context, paused else { return }
        paused = false
        reference?.readingPaused.store(false, ordering: .releasing)
        // What the last reads brought in comes first; it may pause reading again.
        processInbound()
        flushIfNeeded()
        guard !paused else { return }
        setAutoRead(true, context: context)
        context.read()
    }

    /// On the channel's own loop, without a future when the channel allows it.
    private func setAutoRead(_ on: Bool, context: ChannelHandlerContext) {
        if let options = context.channel.syncOptions {
            try? options.setOption(.autoRead, value: on)
        } else {
            context.channel.setOption(.autoRead, value: on).whenComplete { _ in }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let finish = state.channelInactive() { finishConnection(finish, on: context.eventLoop) }
        context.fireChannelInactive()
    }

    /// The connection is over for the broker: its session is let go (or handed on), its will
    /// published, its end reported. Runs once (the state machine answers a finish once), when
    /// the broker closes the connection (its socket may linger a moment to deliver the last
    /// packets) or when the connection ends on its own.
    private func finishConnection(_ finish: BrokerConnectionStateMachine.Finish, on eventLoop: any EventLoop) {
        connectTimeout?.cancel()
        connectTimeout = nil
        keepAliveSweeper?.forget(self)
        keepAliveSweeper = nil
        core.state.withLockedValue { $0.connections -= 1 }
        if finish.wasConnected, let session, let reference {
            let stillOwner = core.connectionClosed(session: session, connection: reference, will: finish.will, eventLoop: eventLoop)
            // A connection that lost its session to another one ended by takeover, whatever
            // else happened to it at the same time: the client is still connected.
            let reason = stillOwner ? finish.reason : .takenOver
            if let principal { core.hooks.clientDisconnected(principal, reason: reason) }
            core.events.yield(.clientDisconnected(clientID: session.clientID, reason: reason))
        }
    }

    // MARK: CONNECT

    private func authenticate(_ connect: MQTTConnect) {
        guard let context else { return }
        let request = MQTTConnectRequest(
            clientID: connect.clientID, username: connect.username, password: connect.password,
            version: connect.version, keepAlive: connect.keepAlive, remoteAddress: remoteAddress, isSecure: isSecure
        )
        let hooks = core.hooks
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        authentication = Task {
            let result = await hooks.authenticate(request)
            eventLoop.execute { bound.value.completeConnect(result) }
        }
    }

    private func completeConnect(_ result: MQTTAuthentication) {
        authentication = nil
        guard let context else { return }
        let hooks = core.hooks
        let admission: BrokerConnectionStateMachine.Admission
        switch state.authenticationCompleted(
            result, configuration: core.configuration,
            authorizeWill: { hooks.authorizePublish($0, topic: $1) },
            newClientID: { "auto-" + String(UInt64.random(in: 0...UInt64.max), radix: 36) }
        ) {
        case .none: return
        case .close(let close): return carryOut(close)
        case .admit(let admitted): admission = admitted
        }
        connectTimeout?.cancel()
        connectTimeout = nil
        let principal = admission.principal
        self.principal = principal
        if admission.keepAlive > 0 {
            let timeout = TimeAmount.nanoseconds(Int64(Double(admission.keepAlive) * core.configuration.keepAliveFactor * 1e9))
            let sweeper = core.keepAliveSweepers.sweeper(for: context.eventLoop)
            sweeper.watch(self, timeout: timeout)
            keepAliveSweeper = sweeper
        }
        guard let opened = core.openSession(connect: admission.connect, clientID: principal.clientID, principal: principal, connection: reference!) else {
            core.logger.notice("refused a client id that holds another user's session", metadata: ["mqtt.client": "\(principal.clientID)"])
            if let close = state.sessionRefused() { carryOut(close) }
            return
        }
        session = opened.session
        opened.replaced?.close(reason: .sessionTakenOver)
        let pending = state.sessionOpened()
        if version == .v5, let accepted = admission.connect.properties.topicAliasMaximum, accepted > 0, core.configuration.outgoingTopicAliasMaximum > 0 {
            if aliases == nil { aliases = OutgoingTopicAliases() }
            aliases!.outgoingMaximum = min(accepted, core.configuration.outgoingTopicAliasMaximum)
        }
        var properties = connackProperties(assigned: admission.assignedClientID)
        if let serverKeepAlive = admission.serverKeepAlive { properties.list.append(.serverKeepAlive(serverKeepAlive)) }
        write([.connack(MQTTConnAck(sessionPresent: opened.sessionPresent, reasonCode: .success, properties: properties))])
        core.hooks.clientConnected(principal, remoteAddress: remoteAddress)
        core.events.yield(.clientConnected(principal, remoteAddress: remoteAddress, sessionPresent: opened.sessionPresent))
        // What a resumed session had in flight goes first; and the retained messages of the
        // server-side subscriptions must not be in flight yet, or they would be resent as such.
        write(core.resume(opened.session))
        let serverSide = core.hooks.serverSideSubscriptions(for: principal)
        if !serverSide.isEmpty {
            let (_, retained) = core.subscribe(opened.session, serverSide, identifier: nil)
            enqueue(retained)
        }
        if let scope = core.hooks.serverSideScope(for: principal) {
            enqueue(core.bindScope(opened.session, scope))
        }
        for packet in pending {
            guard state.isConnected else { break }
            receive(packet)
        }
        // Publications held until CONNACK are routed now, not at the next read (there may be none).
        commitDeliveries()
        flushIfNeeded()
    }

    private func connackProperties(assigned: String?) -> MQTTProperties {
        guard version == .v5 else { return [] }
        let configuration = core.configuration
        var properties: MQTTProperties = [
            .receiveMaximum(configuration.receiveMaximum),
            .maximumPacketSize(UInt32(clamping: configuration.maximumPacketSize)),
            .topicAliasMaximum(configuration.topicAliasMaximum),
        ]
        if configuration.maximumQoS != .exactlyOnce { properties.list.append(.maximumQoS(configuration.maximumQoS.rawValue)) }
        if !configuration.retainAvailable { properties.list.append(.retainAvailable(0)) }
        if let assigned { properties.list.append(.assignedClientIdentifier(assigned)) }
        return properties
    }

    // MARK: Packets of a connected client

    /// Acknowledgements, subscriptions and pings of a connected client: its session's business.
    private func handle(_ packet: MQTTPacket, session: BrokerSession) {
        switch packet {
        case .puback(let ack):
            acknowledge(ack.packetID, completing: .awaitingPubAck, session: session)
        case .pubrec(let ack):
            let found = session.lock.withLock { () -> Bool in
                guard session.inflight[ack.packetID]?.stage == .awaitingPubRec else { return false }
                if ack.reasonCode.isFailure {
                    session.removeInflight(ack.packetID)
                } else {
                    session.inflight[ack.packetID]?.stage = .awaitingPubComp
                }
                return true
            }
            if ack.reasonCode.isFailure { write(session.lock.withLock { session.drainQueue(now: .now()) }); return }
            write([.pubrel(MQTTAck(packetID: ack.packetID, reasonCode: found ? .success : .packetIdentifierNotFound))])
        case .pubcomp(let ack):
            acknowledge(ack.packetID, completing: .awaitingPubComp, session: session)
        case .pubrel(let ack):
            let known = session.lock.withLock { session.inboundQoS2.remove(ack.packetID) != nil }
            write([.pubcomp(MQTTAck(packetID: ack.packetID, reasonCode: known || version != .v5 ? .success : .packetIdentifierNotFound))])
        case .subscribe(let subscribe):
            let (codes, retained) = core.subscribe(session, subscribe.subscriptions, identifier: subscribe.properties.subscriptionIdentifiers.first)
            write([.suback(MQTTSubAck(packetID: subscribe.packetID, reasonCodes: codes))])
            enqueue(retained)
        case .unsubscribe(let unsubscribe):
            let codes = core.unsubscribe(session, unsubscribe.filters)
            write([.unsuback(MQTTSubAck(packetID: unsubscribe.packetID, reasonCodes: version == .v5 ? codes : []))])
        case .pingreq:
            write([.pingresp])
        case .connect, .connack, .publish, .disconnect, .suback, .unsuback, .pingresp, .auth:
            // The state machine answers these itself.
            return
        }
    }

    private func publish(_ message: MQTTMessage, qos: MQTTQoS, packetID: UInt16?, session: BrokerSession) {
        let topic = message.topic
        guard let principal, core.hooks.authorizePublish(principal, topic: topic) else {
            core.logger.debug("publication refused", metadata: ["mqtt.client": "\(session.clientID)", "mqtt.topic": "\(topic)"])
            switch qos {
            case .atMostOnce: return
            case .atLeastOnce: return write([.puback(MQTTAck(packetID: packetID!, reasonCode: version == .v5 ? refusal : .success))])
            case .exactlyOnce: return write([.pubrec(MQTTAck(packetID: packetID!, reasonCode: version == .v5 ? refusal : .success))])
            }
        }
        switch qos {
        case .atMostOnce:
            _ = core.route(message, from: session, into: &outbox)
        case .atLeastOnce:
            let delivered = core.route(message, from: session, into: &outbox)
            write([.puback(MQTTAck(packetID: packetID!, reasonCode: delivered == 0 && version == .v5 ? .noMatchingSubscribers : .success))])
        case .exactlyOnce:
            let id = packetID!
            let (isNew, overLimit) = session.lock.withLock { () -> (Bool, Bool) in
                let isNew = session.inboundQoS2.insert(id).inserted
                return (isNew, session.inboundQoS2.count > Int(core.configuration.receiveMaximum))
            }
            if overLimit { return close(reason: .receiveMaximumExceeded, because: .protocolError) }
            // Delivered on first receipt only: a resent PUBLISH (DUP) with a known id is not routed again.
            let delivered = isNew ? core.route(message, from: session, into: &outbox) : 1
            write([.pubrec(MQTTAck(packetID: id, reasonCode: delivered == 0 && version == .v5 ? .noMatchingSubscribers : .success))])
        }
    }

    /// What a v5 client is told when the hooks refuse it something.
    private var refusal: MQTTReasonCode { core.configuration.revealsRefusalReason ? .notAuthorized : .unspecifiedError }

    private func acknowledge(_ id: UInt16, completing stage: InflightMessage.Stage, session: BrokerSession) {
        let next = session.lock.withLock { () -> [MQTTPacket] in
            guard session.inflight[id]?.stage == stage else { return [] }
            session.removeInflight(id)
            return session.drainQueue(now: .now())
        }
        write(next)
    }

    // MARK: Outbound

    /// Queues messages for the session (retained messages after SUBACK) and sends what the
    /// window allows.
    private func enqueue(_ messages: [PendingMessage]) {
        guard let session, !messages.isEmpty else { return }
        let packets = session.lock.withLock { () -> [MQTTPacket] in
            for message in messages { session.queue.append(message) }
            return session.drainQueue(now: .now())
        }
        write(packets)
    }

    /// Encodes and writes packets; the flush happens once the event loop has run what is pending,
    /// so that messages arriving together leave together.
    func write(_ packets: [MQTTPacket]) {
        // Nothing is sent once the connection is over for the broker, but what closing sends.
        guard state.isOpen else { return }
        send(packets)
    }

    private func send(_ packets: [MQTTPacket]) {
        guard let context, !packets.isEmpty else { return }
        let limit = session?.maximumPacketSizeUnlocked
        var buffer = context.channel.allocator.buffer(capacity: 64 * packets.count)
        for var packet in packets {
            var definedAlias: String?
            if let aliases, aliases.outgoingMaximum > 0, case .publish(var publish) = packet {
                definedAlias = Self.applyOutgoingAlias(&publish, aliases)
                packet = .publish(publish)
            }
            let start = buffer.writerIndex
            do {
                try packet.write(to: &buffer, version: version)
            } catch {
                buffer.moveWriterIndex(to: start)
                if let definedAlias { aliases?.outgoing[definedAlias] = nil }
                core.logger.debug("a packet could not be encoded", metadata: ["mqtt.error": "\(error)"])
                continue
            }
            // MQTT 5 §3.1.2.11.4: a packet above the client's maximum is discarded, not sent.
            if let limit, buffer.writerIndex - start > limit {
                buffer.moveWriterIndex(to: start)
                // The client never saw this alias defined.
                if let definedAlias { aliases?.outgoing[definedAlias] = nil }
            }
        }
        if buffer.readableBytes > 0 { context.write(wrapOutboundOut(buffer), promise: nil) }
        guard !flushScheduled else { return }
        flushScheduled = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.flushIfNeeded() }
    }

    /// The first message on a topic defines an alias beside the topic; later ones carry the
    /// alias alone. Topics beyond the client's maximum go out whole. Returns the topic whose
    /// alias this packet defines, if it defines one.
    private static func applyOutgoingAlias(_ publish: inout MQTTPublish, _ aliases: OutgoingTopicAliases) -> String? {
        if let alias = aliases.outgoing[publish.topic] {
            publish.properties.list.append(.topicAlias(alias))
            publish.topic = ""
            return nil
        }
        guard aliases.nextOutgoing <= Int(aliases.outgoingMaximum) else { return nil }
        let alias = UInt16(aliases.nextOutgoing)
        aliases.nextOutgoing += 1
        aliases.outgoing[publish.topic] = alias
        publish.properties.list.append(.topicAlias(alias))
        return publish.topic
    }

    private func flushIfNeeded() {
        guard flushScheduled, let context else { return }
        flushScheduled = false
        context.flush()
    }

    private func close(reason: MQTTReasonCode, because cause: MQTTBrokerEvent.DisconnectReason) {
        guard context != nil, let close = state.close(reason, because: cause) else { return }
        carryOut(close)
    }

    /// Closes the connection; a v5 client is told why with DISCONNECT first.
    func close(reason: MQTTReasonCode?) {
        guard context != nil, let close = state.close(reason) else { return }
        carryOut(close)
    }

    /// Sends what closing sends (a refusing CONNACK, a v5 DISCONNECT), ends the connection for
    /// the broker and closes the socket once the client has had a moment to read.
    private func carryOut(_ close: BrokerConnectionStateMachine.Close) {
        guard let context else { return }
        if let code = close.connack { send([.connack(MQTTConnAck(reasonCode: code))]) }
        if let code = close.disconnect { send([.disconnect(MQTTReasonPacket(reasonCode: code))]) }
        flushScheduled = true
        flushIfNeeded()
        finishConnection(close.finish, on: context.eventLoop)
        lingeringClose(context)
    }

    /// How long a closing connection's input is still read, so that the last packets reach
    /// the client.
    private static let lingerTime = TimeAmount.seconds(2)

    /// Closes the output first and reads (and drops) what the client still sends for a moment
    /// before closing: a socket closed with unread input resets the connection, and the client
    /// then loses what it had not read yet (our DISCONNECT, a refusing CONNACK). A client that
    /// closes its side ends it at once; a transport that cannot half-close is closed outright.
    private func lingeringClose(_ context: ChannelHandlerContext) {
        let channel = context.channel
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: promise)
        promise.futureResult.whenComplete { result in
            switch result {
            case .success:
                channel.eventLoop.scheduleTask(in: Self.lingerTime) { channel.close(promise: nil) }
            case .failure:
                channel.close(promise: nil)
            }
        }
    }
}

@available(*, unavailable)
extension BrokerConnectionHandler: Sendable {}

import DequeModule
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TetherCore
import TetherWebSocketClient

extension MQTTClient {
    /// Connects, then keeps the connection up until cancelled: after a drop it waits (backoff
    /// with jitter) and connects again, resuming or rebuilding the session.
    func maintainConnection(firstConnection: AsyncPromise<Void, MQTTError>) async {
        var attempt = 0
        while !Task.isCancelled {
            do throws(MQTTError) {
                let channel = try await openChannel()
                // Known before CONNECT goes out: the broker may send messages in the same read as
                // CONNACK (a resumed session's queue), and they must be acknowledged.
                state.withLock { $0.channel = channel }
                let connack: MQTTConnAck
                do {
                    connack = try await handshake(on: channel)
                } catch {
                    try? await channel.close()
                    throw error
                }
                established(on: channel, connack: connack)
                firstConnection.resolve(.success(()))
                attempt = 0
                try? await channel.closeFuture.get()
            } catch {
                guard firstConnection.isResolved else {
                    firstConnection.resolve(.failure(error))
                    return
                }
                logger.debug("MQTT connection attempt failed", metadata: ["mqtt.error": "\(error)"])
            }
            guard let delay = configuration.reconnectDelay(attempt: attempt), !Task.isCancelled else { break }
            attempt += 1
            eventBroadcast.yield(.reconnecting(attempt: attempt, delay: delay))
            do { try await Task.sleep(for: delay) } catch { break }
        }
        failEverythingPending(MQTTError(.connectionClosed, "the connection to the broker ended and will not be retried"))
    }

    private func openChannel() async throws(MQTTError) -> any Channel {
        let configuration = self.configuration
        let keepAlive = configuration.keepAlive
        let pingTimeout = TimeAmount(configuration.effectivePingTimeout)
        let readiness = ChannelFutureBox()
        let client = self
        do {
            let channel = try await ClientBootstrap(group: group)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let id = ObjectIdentifier(channel)
                        let addMQTT: @Sendable (any Channel) throws -> Void = { channel in
                            var handlers: [any ChannelHandler] = []
                            if keepAlive > 0 { handlers.append(IdleStateHandler(writeTimeout: .seconds(Int64(keepAlive)))) }
                            handlers.append(
                                ByteToMessageHandler(MQTTPacketDecoder(version: configuration.version, maximumPacketSize: configuration.maximumPacketSize)))
                            handlers.append(
                                MQTTClientHandler(
                                    pingTimeout: pingTimeout,
                                    onPacket: { [weak client] packet in client?.receive(packet, channel: id) },
                                    onClose: { [weak client] error in client?.connectionEnded(channel: id, error: error) }
                                ))
                            try channel.pipeline.syncOperations.addHandlers(handlers)
                        }
                        switch configuration.transport.base {
                        case .tcp:
                            try addMQTT(channel)
                        case .custom(_, let configure):
                            try configure(channel, configuration.host)
                            try addMQTT(channel)
                        case .webSocket(let path, let secure):
                            try secure?(channel, configuration.host)
                            readiness.set(
                                try WebSocketClientSetup.install(on: channel, host: configuration.host, port: configuration.port, path: path, addMQTT: addMQTT))
                        }
                    }
                }
                .connect(host: configuration.host, port: configuration.port)
                .get()
            if let ready = readiness.future {
                // The upgrade must finish within the connect timeout too.
                let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(configuration.connectTimeout)) { channel.close(promise: nil) }
                defer { deadline.cancel() }
                try await ready.get()
            }
            return channel
        } catch {
            throw Self.connectError(error, configuration: configuration)
        }
    }

    static func connectError(_ error: any Error, configuration: MQTTClientConfiguration) -> MQTTError {
        let target = "\(configuration.host):\(configuration.port)"
        if let error = error as? MQTTError { return error }
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return MQTTError(.dnsFailure, "cannot resolve \(configuration.host)")
            }
            let reasons = error.connectionErrors.map { "\($0.error)" }.joined(separator: "; ")
            return MQTTError(.connectFailed, "cannot connect to \(target): \(reasons)")
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return MQTTError(.timeout, "no TCP connection to \(target) within \(configuration.connectTimeout)")
        }
        let text = "\(error)"
        if "\(type(of: error))".contains("SSL") || text.contains("SSL") || text.contains("TLS") || text.contains("handshake") || text.contains("certificate") {
            return MQTTError(.tlsFailure, "TLS with \(target) failed: \(text)")
        }
        return MQTTError(.connectFailed, "cannot connect to \(target): \(text)")
    }

    private func handshake(on channel: any Channel) async throws(MQTTError) -> MQTTConnAck {
        var properties: MQTTProperties = []
        if configuration.version == .v5 {
            if configuration.sessionExpiry > 0 { properties.list.append(.sessionExpiryInterval(configuration.sessionExpiry)) }
            properties.list.append(.receiveMaximum(UInt16(clamping: max(1, configuration.maximumInflight))))
            properties.list.append(.maximumPacketSize(UInt32(clamping: configuration.maximumPacketSize)))
        }
        let credentials =
            configuration.credentials?()
            ?? MQTTCredentials(
                clientID: configuration.clientID, username: configuration.username, password: configuration.password
            )
        let connect = MQTTConnect(
            version: configuration.version, clientID: credentials.clientID, cleanStart: configuration.cleanStart,
            keepAlive: configuration.keepAlive, username: credentials.username, password: credentials.password,
            will: configuration.will, properties: properties
        )
        let timeout = TimeAmount(configuration.connectTimeout)
        let connack: MQTTConnAck
        do {
            connack = try await withCheckedThrowingContinuation { continuation in
                state.withLock { $0.connack = continuation }
                // The connection may already be gone (a failed TLS handshake): then nobody else
                // would ever answer this continuation.
                guard channel.isActive else {
                    let (waiting, reason) = state.withLock { state in
                        defer { state.connack = nil }
                        return (state.connack, state.lastCloseError)
                    }
                    waiting?.resume(throwing: reason ?? MQTTError(.connectionClosed, "the connection closed before CONNACK"))
                    return
                }
                let deadline = channel.eventLoop.scheduleTask(in: timeout) { [self] in
                    let waiting = state.withLock { state in
                        defer { state.connack = nil }
                        return state.connack
                    }
                    waiting?.resume(throwing: MQTTError(.timeout, "no CONNACK in time"))
                }
                channel.closeFuture.whenComplete { _ in deadline.cancel() }
                send([.connect(connect)], on: channel)
            }
        } catch let error as MQTTError {
            throw error
        } catch {
            throw MQTTError(.connectionClosed, "\(error)")
        }
        guard !connack.reasonCode.isFailure else {
            throw MQTTError(.connectionRefused, "the broker refused the connection", reasonCode: connack.reasonCode)
        }
        return connack
    }

    /// The session is up: record the channel, then resend what the broker has not acknowledged
    /// (a resumed session) or requeue it and subscribe again (a new session). The SUBSCRIBE that
    /// restores the subscriptions goes out before any queued publication, and before anyone
    /// hears of the connection, so that no answer to a publication can arrive unsubscribed.
    ///
    /// Packets are written outside the lock; so that a publication made meanwhile cannot
    /// overtake the resent and restoring packets, the connection counts as connected (and
    /// others write to it) only once those are written.
    private func established(on channel: any Channel, connack: MQTTConnAck) {
        let packets = state.withLock { state -> [MQTTPacket] in
            state.channel = channel
            state.negotiatedInflight = min(configuration.maximumInflight, Int(connack.properties.receiveMaximum ?? UInt16.max))
            var packets: [MQTTPacket] = []
            if connack.sessionPresent {
                for id in state.inflightOrder {
                    guard var entry = state.inflight[id] else { continue }
                    switch entry.stage {
                    case .awaitingPubAck, .awaitingPubRec:
                        entry.publish.dup = true
                        state.inflight[id] = entry
                        packets.append(.publish(entry.publish))
                    case .awaitingPubComp:
                        packets.append(.pubrel(MQTTAck(packetID: id)))
                    }
                }
            } else {
                // A new session: the broker knows nothing of earlier packet identifiers. Messages it
                // never acknowledged are sent again as new ones, so that none is lost.
                state.receivedQoS2.removeAll()
                for id in state.inflightOrder.reversed() {
                    guard let entry = state.inflight[id] else { continue }
                    if entry.stage == .awaitingPubComp {
                        entry.completion?.resume()
                        continue
                    }
                    let publish = entry.publish
                    state.outbound.prepend(
                        Outbound(
                            message: MQTTMessage(
                                topic: publish.topic, payload: publish.payload, qos: publish.qos, retain: publish.retain, properties: publish.properties),
                            completion: entry.completion))
                }
                state.inflight.removeAll()
                state.inflightOrder.removeAll()
                let restore = state.subscriptions.values.flatMap(\.subscriptions)
                if !restore.isEmpty {
                    let id = state.allocatePacketID()
                    state.acknowledgements[id] = PendingAcknowledgement(continuation: nil, deadline: nil)
                    packets.append(.subscribe(MQTTSubscribe(packetID: id, subscriptions: restore)))
                }
            }
            return packets
        }
        send(packets, on: channel)
        let queued = state.withLock { state -> [MQTTPacket]? in
            // Closed meanwhile: the next connection starts over.
            guard let current = state.channel, current === channel else { return nil }
            state.connected = true
            return drain(&state)
        }
        guard let queued else { return }
        send(queued, on: channel)
        eventBroadcast.yield(.connected(sessionPresent: connack.sessionPresent))
    }

    private func connectionEnded(channel id: ObjectIdentifier, error: (any Error)?) {
        let (pending, connack) = state.withLock { state -> ([PendingAcknowledgement], CheckedContinuation<MQTTConnAck, any Error>?) in
            guard let channel = state.channel, ObjectIdentifier(channel) == id else {
                defer { state.connack = nil }
                return ([], state.connack)
            }
            state.channel = nil
            state.connected = false
            defer {
                state.acknowledgements.removeAll()
                state.connack = nil
            }
            return (Array(state.acknowledgements.values), state.connack)
        }
        let reason = error.map { Self.connectError($0, configuration: configuration) } ?? MQTTError(.connectionClosed, "the broker closed the connection")
        state.withLock { $0.lastCloseError = reason }
        connack?.resume(throwing: reason)
        for acknowledgement in pending { acknowledgement.complete(.failure(reason)) }
        if connack == nil { eventBroadcast.yield(.disconnected(error == nil ? nil : reason)) }
    }

    // MARK: Inbound

    private func receive(_ packet: MQTTPacket, channel id: ObjectIdentifier) {
        let current = state.withLock { $0.channel.map { ObjectIdentifier($0) == id ? $0 : nil } ?? nil }
        switch packet {
        case .connack(let connack):
            let waiting = state.withLock { state in
                defer { state.connack = nil }
                return state.connack
            }
            waiting?.resume(returning: connack)
        case .publish(let publish):
            guard let channel = current else { return }
            let message = MQTTMessage(topic: publish.topic, payload: publish.payload, qos: publish.qos, retain: publish.retain, properties: publish.properties)
            switch publish.qos {
            case .atMostOnce:
                deliver(message)
            case .atLeastOnce:
                deliver(message)
                send([.puback(MQTTAck(packetID: publish.packetID!))], on: channel)
            case .exactlyOnce:
                let isNew = state.withLock { $0.receivedQoS2.insert(publish.packetID!).inserted }
                if isNew { deliver(message) }
                send([.pubrec(MQTTAck(packetID: publish.packetID!))], on: channel)
            }
        case .pubrel(let ack):
            guard let channel = current else { return }
            _ = state.withLock { $0.receivedQoS2.remove(ack.packetID) }
            send([.pubcomp(MQTTAck(packetID: ack.packetID))], on: channel)
        case .puback(let ack):
            complete(ack, stage: .awaitingPubAck, channel: current)
        case .pubrec(let ack):
            if ack.reasonCode.isFailure {
                complete(ack, stage: .awaitingPubRec, channel: current)
                return
            }
            let known = state.withLock { state -> Bool in
                guard state.inflight[ack.packetID]?.stage == .awaitingPubRec else { return false }
                state.inflight[ack.packetID]?.stage = .awaitingPubComp
                return true
            }
            if let channel = current {
                send(
                    [.pubrel(MQTTAck(packetID: ack.packetID, reasonCode: known || configuration.version != .v5 ? .success : .packetIdentifierNotFound))],
                    on: channel)
            }
        case .pubcomp(let ack):
            complete(ack, stage: .awaitingPubComp, channel: current)
        case .suback(let ack), .unsuback(let ack):
            let pending = state.withLock { $0.acknowledgements.removeValue(forKey: ack.packetID) }
            pending?.complete(.success(packet))
        case .disconnect(let disconnect):
            logger.debug("the broker sent DISCONNECT", metadata: ["mqtt.reason": "\(disconnect.reasonCode)"])
            eventBroadcast.yield(
                .disconnected(
                    MQTTError(.disconnected, disconnect.properties.reasonString ?? "the broker disconnected the client", reasonCode: disconnect.reasonCode)))
        case .pingresp, .auth, .connect, .subscribe, .unsubscribe, .pingreq:
            return
        }
    }

    /// A PUBACK, PUBREC (failure) or PUBCOMP ends an outbound QoS 1/2 exchange.
    private func complete(_ ack: MQTTAck, stage: Inflight.Stage, channel: (any Channel)?) {
        let (completion, packets) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [MQTTPacket]) in
            guard let entry = state.inflight[ack.packetID], entry.stage == stage else { return (nil, []) }
            state.inflight[ack.packetID] = nil
            if let index = state.inflightOrder.firstIndex(of: ack.packetID) { state.inflightOrder.remove(at: index) }
            return (entry.completion, state.connected ? drain(&state) : [])
        }
        if ack.reasonCode.isFailure {
            completion?.resume(
                throwing: MQTTError(.publishRefused, ack.properties.reasonString ?? "the broker refused the publication", reasonCode: ack.reasonCode))
        } else {
            completion?.resume()
        }
        if let channel { send(packets, on: channel) }
    }

    private func deliver(_ message: MQTTMessage) {
        let targets = state.withLock { state -> [AsyncStream<MQTTMessage>.Continuation] in
            let targets = state.subscriptions.values.filter { subscription in
                subscription.subscriptions.contains {
                    MQTTTopic.matches(filter: MQTTTopic.sharedSubscription($0.filter)?.filter ?? $0.filter, topic: message.topic)
                }
            }.compactMap(\.continuation)
            if targets.isEmpty, state.messageConsumers == 0 {
                state.backlog.append(message)
                if state.backlog.count > configuration.maximumQueuedMessages { state.backlog.removeFirst() }
            }
            return targets
        }
        messageBroadcast.yield(message)
        for target in targets { target.yield(message) }
    }

    // MARK: Shutdown

    /// Says DISCONNECT and closes the connection; the connection's task then ends.
    func disconnect() async {
        let channel = state.withLock { state -> (any Channel)? in
            state.shutDown = true
            return state.connected ? state.channel : nil
        }
        if let channel {
            send([.disconnect(MQTTReasonPacket())], on: channel)
            try? await channel.close()
        }
    }

    /// Closes the connection at once (cancellation: no DISCONNECT, no waiting).
    func closeConnection() {
        let channel = state.withLock { state -> (any Channel)? in
            state.shutDown = true
            return state.channel
        }
        channel?.close(promise: nil)
    }

    /// After the connection's task ended: whatever still waits fails, the streams end.
    func finish() {
        failEverythingPending(MQTTError(.cancelled, "the client shut down"))
        messageBroadcast.finish()
        eventBroadcast.finish()
    }

    private func failEverythingPending(_ error: MQTTError) {
        let (outbound, inflight, subscriptions) = state.withLock { state in
            defer {
                state.outbound.removeAll()
                state.inflight.removeAll()
                state.inflightOrder.removeAll()
                state.shutDown = true
            }
            return (Array(state.outbound), Array(state.inflight.values), Array(state.subscriptions.values))
        }
        for entry in outbound { entry.completion?.resume(throwing: error) }
        for entry in inflight { entry.completion?.resume(throwing: error) }
        for subscription in subscriptions { subscription.continuation?.finish() }
    }
}

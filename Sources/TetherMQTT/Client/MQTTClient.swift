import DequeModule
public import Logging
public import NIOCore
import NIOPosix
import Synchronization
import TetherCore

/// An MQTT 3.1.1 and 5 client: QoS 0, 1 and 2 both ways with a bounded in-flight window, clean
/// and persistent sessions with redelivery after reconnect, automatic reconnection with
/// exponential backoff and jitter, a will, scoped subscriptions, and a bounded offline queue.
///
/// ```swift
/// try await MQTTClient.withClient(configuration: .init(host: "broker.local")) { client in
///     try await client.subscribe(to: [.init(filter: "devices/+/telemetry", qos: .atLeastOnce)]) { messages in
///         for await message in messages { print(message.topic, message.payloadString) }
///     }
/// }
/// ```
public final class MQTTClient: Sendable {
    /// The configuration the client was built with, fixed for its lifetime.
    public let configuration: MQTTClientConfiguration
    let logger: Logger
    let group: any EventLoopGroup
    let messageBroadcast = Broadcast<MQTTMessage>(bufferSize: 10_000)
    let eventBroadcast = Broadcast<MQTTClientEvent>(bufferSize: 256)

    struct Outbound {
        var message: MQTTMessage
        var completion: CheckedContinuation<Void, any Error>?
    }

    struct Inflight {
        enum Stage { case awaitingPubAck, awaitingPubRec, awaitingPubComp }
        var publish: MQTTPublish
        var stage: Stage
        var completion: CheckedContinuation<Void, any Error>?
    }

    struct ActiveSubscription {
        var subscriptions: [MQTTTopicSubscription]
        /// Nil for a subscription made without a scope: its messages arrive on ``messages()``.
        var continuation: AsyncStream<MQTTMessage>.Continuation?
    }

    struct State {
        var channel: (any Channel)?
        var connected = false
        var shutDown = false
        var negotiatedInflight = 0
        var nextPacketID: UInt16 = 1
        var outbound = Deque<Outbound>()
        var inflight: [UInt16: Inflight] = [:]
        var inflightOrder = Deque<UInt16>()
        var receivedQoS2: Set<UInt16> = []
        var acknowledgements: [UInt16: PendingAcknowledgement] = [:]
        var connack: CheckedContinuation<MQTTConnAck, any Error>?
        var subscriptions: [Int: ActiveSubscription] = [:]
        var nextSubscriptionID = 1
        /// Messages that arrived while nobody listened (a resumed session's queue, server-side
        /// subscriptions), kept for the first ``MQTTClient/messages()`` stream.
        var backlog = Deque<MQTTMessage>()
        /// Why the last connection ended, for a handshake that learns of it late.
        var lastCloseError: MQTTError?
        var messageConsumers = 0

        mutating func allocatePacketID() -> UInt16 {
            while nextPacketID == 0 || inflight[nextPacketID] != nil || acknowledgements[nextPacketID] != nil { nextPacketID &+= 1 }
            defer { nextPacketID &+= 1 }
            return nextPacketID
        }
    }

    let state = Mutex(State())

    init(configuration: MQTTClientConfiguration, logger: Logger, group: any EventLoopGroup) {
        self.configuration = configuration
        self.logger = logger
        self.group = group
    }

    /// Connects, runs `body`, then disconnects cleanly. The first connection must succeed (its
    /// error is thrown: refused with a reason code, TLS, DNS, timeout); later drops are repaired
    /// by reconnecting when `configuration.reconnect` is set.
    @discardableResult
    public static func withClient<Result: Sendable>(
        configuration: MQTTClientConfiguration,
        logger: Logger = Logger(label: "tether.mqtt.client"),
        group: (any EventLoopGroup)? = nil,
        _ body: (MQTTClient) async throws -> Result
    ) async throws -> Result {
        let client = MQTTClient(configuration: configuration, logger: logger, group: group ?? MultiThreadedEventLoopGroup.singleton)
        let firstConnection = AsyncPromise<Void, MQTTError>()
        // The connection is a child of this call: it ends before the call returns.
        return try await withThrowingTaskGroup(of: Void.self) { connection in
            connection.addTask {
                await withTaskCancellationHandler {
                    await client.maintainConnection(firstConnection: firstConnection)
                } onCancel: {
                    client.closeConnection()
                }
            }
            let outcome: Swift.Result<Result, any Error>
            do {
                try await firstConnection.value(ifCancelled: { MQTTError(.cancelled, "cancelled while connecting") })
                outcome = .success(try await body(client))
                await client.disconnect()
            } catch {
                outcome = .failure(error)
                await client.disconnect()
            }
            connection.cancelAll()
            try? await connection.waitForAll()
            client.finish()
            return try outcome.get()
        }
    }

    /// Whether the client has a connection right now.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Messages waiting to be sent (offline, or beyond the in-flight window).
    public var queuedMessageCount: Int { state.withLock { $0.outbound.count } }

    /// Every message the broker delivers, whatever subscription it belongs to (including
    /// server-side subscriptions the client never asked for). Messages that arrived before any
    /// stream or subscription was listening (those of a resumed session come right after
    /// CONNACK) start the first stream, up to `maximumQueuedMessages` of them.
    public func messages() -> AsyncStream<MQTTMessage> {
        // Under the lock, so that no message falls between the backlog and the subscription.
        // (The broadcast finishes only after `shutDown`, so a subscription made here is live
        // and its termination never runs inside this lock.)
        state.withLock { state in
            guard !state.shutDown else {
                let (stream, continuation) = AsyncStream.makeStream(of: MQTTMessage.self)
                continuation.finish()
                return stream
            }
            state.messageConsumers += 1
            defer { state.backlog.removeAll() }
            return messageBroadcast.subscribe(
                startingWith: Array(state.backlog), bufferSize: 10_000,
                onTermination: { [self] in
                    self.state.withLock { $0.messageConsumers -= 1 }
                })
        }
    }

    /// Connections, disconnections and reconnection attempts from now on.
    public func events() -> AsyncStream<MQTTClientEvent> { eventBroadcast.subscribe() }

    // MARK: Publishing

    /// Publishes a message. QoS 0 returns once it is written; QoS 1 once the broker's PUBACK
    /// arrives; QoS 2 once PUBCOMP arrives. While disconnected (or while the in-flight window is
    /// full) the message waits in the queue and is sent in order later.
    ///
    /// - Throws: `MQTTError.Code.offlineQueueFull` when the queue is full;
    ///   `MQTTError.Code.publishRefused` when a v5 broker refuses it (with its reason code);
    ///   `MQTTError.Code.invalidArgument` for a topic with wildcards.
    public func publish(_ message: MQTTMessage) async throws(MQTTError) {
        try MQTTTopic.validateName(message.topic)
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (packets, channel, error) = state.withLock { state -> ([MQTTPacket], (any Channel)?, MQTTError?) in
                    if state.shutDown { return ([], nil, MQTTError(.cancelled, "the client is shut down")) }
                    guard state.outbound.count < configuration.maximumQueuedMessages else {
                        return ([], nil, MQTTError(.offlineQueueFull, "\(state.outbound.count) messages are already waiting to be sent"))
                    }
                    state.outbound.append(Outbound(message: message, completion: continuation))
                    guard state.connected, let channel = state.channel else { return ([], nil, nil) }
                    return (drain(&state), channel, nil)
                }
                if let error {
                    continuation.resume(throwing: error)
                    return
                }
                if let channel { send(packets, on: channel) }
            }
        } catch let error as MQTTError {
            throw error
        } catch {
            throw MQTTError(.connectionClosed, "\(error)")
        }
    }

    /// Moves queued messages into the window while it has room; QoS 0 ones complete at once.
    /// Call with the lock held.
    func drain(_ state: inout State) -> [MQTTPacket] {
        var packets: [MQTTPacket] = []
        while let next = state.outbound.first {
            if next.message.qos != .atMostOnce, state.inflight.count >= state.negotiatedInflight { break }
            state.outbound.removeFirst()
            let message = next.message
            let properties = configuration.version == .v5 ? message.properties : []
            if message.qos == .atMostOnce {
                packets.append(.publish(MQTTPublish(topic: message.topic, payload: message.payload, retain: message.retain, properties: properties)))
                next.completion?.resume()
                continue
            }
            let id = state.allocatePacketID()
            let publish = MQTTPublish(
                topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain, packetID: id, properties: properties)
            state.inflight[id] = Inflight(publish: publish, stage: message.qos == .atLeastOnce ? .awaitingPubAck : .awaitingPubRec, completion: next.completion)
            state.inflightOrder.append(id)
            packets.append(.publish(publish))
        }
        return packets
    }

    func send(_ packets: [MQTTPacket], on channel: any Channel) {
        guard !packets.isEmpty else { return }
        var buffer = channel.allocator.buffer(capacity: 64 * packets.count)
        for packet in packets {
            do {
                try packet.write(to: &buffer, version: configuration.version)
            } catch {
                logger.debug("a packet could not be encoded", metadata: ["mqtt.error": "\(error)"])
            }
        }
        channel.writeAndFlush(buffer, promise: nil)
    }

    // MARK: Subscribing

    /// Subscribes, runs `body` with the matching messages, and unsubscribes when `body` returns
    /// or throws. Throws `MQTTError.Code.subscriptionRefused` (with the broker's reason code)
    /// when any filter is refused.
    public func subscribe<Result: Sendable>(
        to subscriptions: [MQTTTopicSubscription],
        _ body: (MQTTSubscription) async throws -> Result
    ) async throws -> Result {
        guard !subscriptions.isEmpty else { throw MQTTError(.invalidArgument, "subscribe to at least one filter") }
        for subscription in subscriptions { try MQTTTopic.validateFilter(subscription.filter) }
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTMessage.self, bufferingPolicy: .bufferingNewest(10_000))
        let id = state.withLock { state -> Int in
            defer { state.nextSubscriptionID += 1 }
            state.subscriptions[state.nextSubscriptionID] = ActiveSubscription(subscriptions: subscriptions, continuation: continuation)
            return state.nextSubscriptionID
        }
        do {
            let codes = try await sendSubscribe(subscriptions)
            if let refused = codes.first(where: \.isFailure) {
                throw MQTTError(.subscriptionRefused, "the broker refused a subscription", reasonCode: refused)
            }
        } catch {
            await removeSubscription(id, unsubscribe: false)
            throw error
        }
        do {
            let result = try await body(MQTTSubscription(stream: stream))
            await removeSubscription(id, unsubscribe: true)
            return result
        } catch {
            await removeSubscription(id, unsubscribe: true)
            throw error
        }
    }

    /// Subscribes without a scope, for subscriptions that live as long as the client or until
    /// ``unsubscribe(_:)``: messages arrive on ``messages()``, and the filters the broker granted
    /// are subscribed again after a reconnection that did not resume the session. Returns the
    /// granted reason codes.
    @discardableResult
    public func subscribe(_ subscriptions: [MQTTTopicSubscription]) async throws(MQTTError) -> [MQTTReasonCode] {
        let codes = try await sendSubscribe(subscriptions)
        let granted = zip(subscriptions, codes).filter { !$0.1.isFailure }.map(\.0)
        if !granted.isEmpty {
            state.withLock { state in
                defer { state.nextSubscriptionID += 1 }
                state.subscriptions[state.nextSubscriptionID] = ActiveSubscription(subscriptions: granted, continuation: nil)
            }
        }
        return codes
    }

    /// Ends subscriptions made with ``subscribe(_:)`` (without a scope) to these filters.
    /// Filters a scoped subscription still uses stay subscribed at the broker. Returns the
    /// broker's reason codes (v5; success for each filter under 3.1.1).
    @discardableResult
    public func unsubscribe(_ filters: [String]) async throws(MQTTError) -> [MQTTReasonCode] {
        guard !filters.isEmpty else { throw MQTTError(.invalidArgument, "unsubscribe from at least one filter") }
        let removing = Set(filters)
        let stillUsed = state.withLock { state -> Set<String> in
            for (id, subscription) in state.subscriptions where subscription.continuation == nil {
                let kept = subscription.subscriptions.filter { !removing.contains($0.filter) }
                if kept.isEmpty {
                    state.subscriptions[id] = nil
                } else {
                    state.subscriptions[id]?.subscriptions = kept
                }
            }
            return Set(state.subscriptions.values.flatMap { $0.subscriptions.map(\.filter) })
        }
        let sent = filters.filter { !stillUsed.contains($0) }
        guard !sent.isEmpty else { return filters.map { _ in .success } }
        let reply = try await request { id in .unsubscribe(MQTTUnsubscribe(packetID: id, filters: sent)) }
        guard case .unsuback(let unsuback) = reply else {
            throw MQTTError(.protocolError, "the broker answered UNSUBSCRIBE with \(reply.name)")
        }
        // 3.1.1's UNSUBACK carries no codes.
        let codes = unsuback.reasonCodes.count == sent.count ? unsuback.reasonCodes : sent.map { _ in .success }
        let byFilter = Dictionary(zip(sent, codes), uniquingKeysWith: { first, _ in first })
        return filters.map { byFilter[$0] ?? .success }
    }

    func sendSubscribe(_ subscriptions: [MQTTTopicSubscription]) async throws(MQTTError) -> [MQTTReasonCode] {
        let reply = try await request { id in .subscribe(MQTTSubscribe(packetID: id, subscriptions: subscriptions)) }
        guard case .suback(let suback) = reply, suback.reasonCodes.count == subscriptions.count else {
            throw MQTTError(.protocolError, "the broker answered SUBSCRIBE with \(reply.name)")
        }
        return suback.reasonCodes
    }

    private func removeSubscription(_ id: Int, unsubscribe: Bool) async {
        let (removed, stillUsed) = state.withLock { state -> (ActiveSubscription?, Set<String>) in
            let removed = state.subscriptions.removeValue(forKey: id)
            let used = Set(state.subscriptions.values.flatMap { $0.subscriptions.map(\.filter) })
            return (removed, used)
        }
        removed?.continuation?.finish()
        guard unsubscribe, let removed else { return }
        let filters = removed.subscriptions.map(\.filter).filter { !stillUsed.contains($0) }
        guard !filters.isEmpty, isConnected else { return }
        // A request is bounded by `requestTimeout` and does not stop for cancellation, so the
        // broker forgets the filters even when the caller was cancelled.
        _ = try? await request { id in .unsubscribe(MQTTUnsubscribe(packetID: id, filters: filters)) }
    }

    /// Sends a packet that needs a packet identifier and waits for its acknowledgement, at most
    /// `requestTimeout`.
    func request(_ make: @escaping (UInt16) -> MQTTPacket) async throws(MQTTError) -> MQTTPacket {
        let timeout = TimeAmount(configuration.requestTimeout)
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let prepared = state.withLock { state -> (MQTTPacket, any Channel)? in
                    guard state.connected, let channel = state.channel else { return nil }
                    let id = state.allocatePacketID()
                    let packet = make(id)
                    let deadline = channel.eventLoop.scheduleTask(in: timeout) { [self] in
                        let pending = self.state.withLock { $0.acknowledgements.removeValue(forKey: id) }
                        pending?.continuation?.resume(throwing: MQTTError(.timeout, "no answer to \(packet.name) in time"))
                    }
                    state.acknowledgements[id] = PendingAcknowledgement(continuation: continuation, deadline: deadline)
                    return (packet, channel)
                }
                guard let (packet, channel) = prepared else {
                    continuation.resume(throwing: MQTTError(.notConnected, "not connected to the broker"))
                    return
                }
                send([packet], on: channel)
            }
        } catch let error as MQTTError {
            throw error
        } catch {
            throw MQTTError(.connectionClosed, "\(error)")
        }
    }
}

/// A SUBSCRIBE or UNSUBSCRIBE waiting for its acknowledgement.
struct PendingAcknowledgement {
    /// Nil for the client's own SUBSCRIBE that restores its subscriptions after a reconnection:
    /// nobody waits for it, but its packet identifier stays taken until it is answered.
    let continuation: CheckedContinuation<MQTTPacket, any Error>?
    let deadline: Scheduled<Void>?

    func complete(_ result: Result<MQTTPacket, MQTTError>) {
        deadline?.cancel()
        continuation?.resume(with: result.mapError { $0 as any Error })
    }
}

/// Messages of one scoped subscription.
public struct MQTTSubscription: AsyncSequence, Sendable {
    /// Each element is one message delivered to the subscription.
    public typealias Element = MQTTMessage
    let stream: AsyncStream<MQTTMessage>

    public func makeAsyncIterator() -> AsyncStream<MQTTMessage>.AsyncIterator { stream.makeAsyncIterator() }
}

/// What happened to the client's connection.
public enum MQTTClientEvent: Hashable, Sendable {
    /// CONNACK accepted a connection; `sessionPresent` tells whether the broker resumed the session.
    case connected(sessionPresent: Bool)
    /// The connection ended: the error that ended it (or the broker's DISCONNECT), nil when it
    /// simply closed.
    case disconnected(MQTTError?)
    /// The client connects again after `delay`; `attempt` counts from 1 since the last success.
    case reconnecting(attempt: Int, delay: Duration)
}

extension MQTTClient {
    /// Closes the connection without DISCONNECT, as a network failure would: the broker
    /// publishes the will and the client reconnects. For tests.
    @_spi(Testing) public func simulateConnectionLoss() {
        let channel = state.withLock { $0.channel }
        channel?.close(promise: nil)
    }
}

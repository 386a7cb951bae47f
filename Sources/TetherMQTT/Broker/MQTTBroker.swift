public import Logging
public import NIOCore
import NIOConcurrencyHelpers
import NIOPosix
import Synchronization
import TetherCore

/// An embeddable MQTT 3.1, 3.1.1 and 5.0 broker: sessions (clean and persistent, takeover,
/// v5 expiry), a topic tree with `+`/`#`, the `$` rule and shared subscriptions, retained
/// messages, QoS 1 and 2 with redelivery, wills (with v5 delay), keep-alive enforcement, size
/// limits, and hooks for authentication, authorization, server-side subscriptions and persistence.
///
/// ```swift
/// let broker = MQTTBroker(configuration: .init(), hooks: MyHooks())
/// try await broker.run(listeners: [.tcp(host: "0.0.0.0", port: 1883)])   // until cancelled
/// ```
public final class MQTTBroker: Sendable {
    let core: BrokerCore
    private let group: any EventLoopGroup
    private let bound = AsyncPromise<[SocketAddress], MQTTError>()

    /// Builds a broker that does not listen until ``run(listeners:)``; without a `group` it uses
    /// NIO's shared `MultiThreadedEventLoopGroup.singleton`.
    public init(
        configuration: MQTTBrokerConfiguration = .init(),
        hooks: any MQTTBrokerHooks = MQTTAllowAllHooks(),
        persistence: any MQTTBrokerPersistence = MQTTNoPersistence(),
        logger: Logger = Logger(label: "tether.mqtt.broker"),
        group: (any EventLoopGroup)? = nil
    ) {
        self.core = BrokerCore(configuration: configuration, hooks: hooks, persistence: persistence, logger: logger)
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
    }

    /// The configuration the broker was built with.
    public var configuration: MQTTBrokerConfiguration { core.configuration }

    /// The addresses the listeners are bound to, once they are (ports chosen by the system
    /// when 0 was given).
    public func addresses() async throws(MQTTError) -> [SocketAddress] {
        try await bound.value(ifCancelled: { MQTTError(.cancelled, "stopped waiting for the listeners") })
    }

    /// Open network connections right now.
    public var connectionCount: Int { core.state.withLockedValue { $0.connections } }

    /// Connection handlers still in memory, open or closed (a leak check for tests).
    @_spi(Testing) public var connectionHandlersInMemory: Int { core.connectionHandlersInMemory.load(ordering: .relaxed) }

    /// Sessions the broker holds, connected or not.
    public var sessionCount: Int { core.state.withLockedValue { $0.sessions.count } }

    /// What happens on the broker from now on: clients connecting and disconnecting.
    public func events() -> AsyncStream<MQTTBrokerEvent> { core.events.subscribe() }

    /// Publishes a message as the broker itself (no client, no authorization check).
    @discardableResult
    public func publish(_ message: MQTTMessage) -> Int {
        core.publish(message, from: nil)
    }

    /// Every message published to a topic matching `filter` from now on, in-process. The
    /// subscription ends when the consumer stops iterating.
    public func subscribe(_ filter: String) throws(MQTTError) -> AsyncStream<MQTTMessage> {
        try MQTTTopic.validateFilter(filter)
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTMessage.self, bufferingPolicy: .bufferingNewest(10_000))
        let session = core.addInternalSubscriber(filter: filter) { message, _ in continuation.yield(message) }
        continuation.onTermination = { [core] _ in core.removeInternalSubscriber(session) }
        return stream
    }

    /// Calls `handler` with every message published to a topic matching `filter` from now on,
    /// and who published it (nil: the broker itself, ``publish(_:)``), in-process and without
    /// a buffer: on the publisher's event loop, in the order each publisher sent them.
    /// `handler` must return quickly. Ends when the returned observation is cancelled.
    public func observe(
        _ filter: String, _ handler: @escaping @Sendable (MQTTMessage, _ publisher: MQTTPrincipal?) -> Void
    ) throws(MQTTError) -> MQTTObservation {
        try MQTTTopic.validateFilter(filter)
        let session = core.addInternalSubscriber(filter: filter, sink: handler)
        return MQTTObservation { [core] in core.removeInternalSubscriber(session) }
    }

    /// Sends a message to one client, without a subscription and without authorization
    /// (a gateway answering one device, such as a dynamic registration). Returns false when
    /// the broker holds no session of that client id.
    @discardableResult
    public func send(_ message: MQTTMessage, toClientID clientID: String) -> Bool {
        core.send(message, toClientID: clientID)
    }

    /// Whether a client with this identifier is connected.
    public func isConnected(clientID: String) -> Bool {
        guard let session = core.state.withLockedValue({ $0.sessions[clientID] }) else { return false }
        return session.lock.withLock { session.connection != nil }
    }

    /// Closes a client's connection (v5 clients get DISCONNECT with `reason`).
    public func disconnect(clientID: String, reason: MQTTReasonCode = .administrativeAction) {
        guard let session = core.state.withLockedValue({ $0.sessions[clientID] }) else { return }
        session.lock.withLock { session.connection }?.close(reason: reason)
    }

    /// Loads persisted state, binds the listeners and serves until cancelled; returns normally
    /// when cancelled, after persistent sessions were saved.
    public func run(listeners: [MQTTListener]) async throws {
        let stored = try await core.persistence.load()
        core.restore(sessions: stored.sessions, retained: stored.retained)
        var channels: [NIOAsyncChannel<any Channel, Never>] = []
        do {
            for listener in listeners {
                channels.append(try await bind(listener))
            }
        } catch {
            let failure = MQTTError(.listenFailed, "cannot listen: \(error)")
            bound.resolve(.failure(failure))
            for channel in channels { try? await channel.executeThenClose { _ in } }
            throw failure
        }
        bound.resolve(.success(channels.compactMap { $0.channel.localAddress }))
        do {
            try await withThrowingDiscardingTaskGroup { group in
                for channel in channels {
                    group.addTask {
                        try await channel.executeThenClose { inbound in
                            for try await _ in inbound {}
                        }
                    }
                }
            }
        } catch _ where Task.isCancelled {
            // Cancellation is how the broker is stopped.
        }
        // Clients must notice that this broker is gone (and go elsewhere), not keep talking
        // to a process that no longer handles what they send.
        let connections = core.state.withLockedValue { state in state.sessions.values.compactMap { session in session.lock.withLock { session.connection } } }
        for connection in connections { connection.close(reason: .serverShuttingDown) }
        saveSessionsAtShutdown()
    }

    /// Runs a single plain TCP listener.
    public func run(host: String = "0.0.0.0", port: Int = 1883) async throws {
        try await run(listeners: [.tcp(host: host, port: port)])
    }

    private func bind(_ listener: MQTTListener) async throws -> NIOAsyncChannel<any Channel, Never> {
        let core = self.core
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // A fleet reconnecting at once: with a short queue the kernel drops SYNs, and each
            // drop costs the device a retransmission (1 s, then 3, 7…). Linux caps it at somaxconn.
            .serverChannelOption(.backlog, value: 4096)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // One read per connection per event-loop turn: with many publishers on a loop, the
            // drains of their subscribers get their turn in between (fairness under load).
            .childChannelOption(.maxMessagesPerRead, value: 1)
            // SwiftNIO keeps each connection's receive buffer between reads, at the largest size
            // it has needed. An idle client needs little after its CONNECT; the allocator grows
            // the buffer for busy ones (up to 64 KiB). SwiftNIO's own adaptive allocator would
            // cost a heap box per connection.
            .childChannelOption(.recvAllocator, value: CompactRecvByteBufferAllocator(minimum: 64, initial: 64, maximum: 65_536))
            .bind(host: listener.host, port: listener.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let isSecure = listener.isSecure
                    try listener.configure(channel) { channel in
                        try channel.pipeline.syncOperations.addHandler(BrokerConnectionHandler(core: core, isSecure: isSecure))
                    }
                    return channel
                }
            }
    }

    private func saveSessionsAtShutdown() {
        let sessions = core.state.withLockedValue { Array($0.sessions.values) }
        for session in sessions {
            let snapshot = session.lock.withLock { session.endsWithConnection || session.sink != nil ? nil : session.stored() }
            if let snapshot { core.persistence.saveSession(snapshot) }
        }
    }
}

/// An in-process observer of a broker's messages (``MQTTBroker/observe(_:_:)``).
public final class MQTTObservation: Sendable {
    private let end: @Sendable () -> Void
    private let ended = NIOLockedValueBox(false)

    init(end: @escaping @Sendable () -> Void) { self.end = end }

    /// Stops the observation; later calls do nothing.
    public func cancel() {
        let first = ended.withLockedValue { ended in
            defer { ended = true }
            return !ended
        }
        if first { end() }
    }

    deinit { cancel() }
}

/// Where a broker accepts connections.
public struct MQTTListener: Sendable {
    /// The address to bind: `0.0.0.0` for every IPv4 interface, `::` for every IPv6 one.
    public var host: String
    /// The port to bind; 0 lets the system choose one (see ``MQTTBroker/addresses()``).
    public var port: Int
    let transport: Transport

    enum Transport: Sendable {
        case tcp
        case custom(@Sendable (any Channel) throws -> Void, isSecure: Bool)
        /// Prepares the channel and adds the MQTT handler itself, when the transport is ready for
        /// MQTT bytes (after a WebSocket upgrade).
        case layered(isSecure: Bool, prepare: @Sendable (any Channel, _ addMQTT: @escaping @Sendable (any Channel) throws -> Void) throws -> Void)
    }

    /// Plain MQTT over TCP (1883 by convention).
    public static func tcp(host: String = "0.0.0.0", port: Int = 1883) -> MQTTListener {
        MQTTListener(host: host, port: port, transport: .tcp)
    }

    /// A listener whose channels are prepared by `configure` before MQTT is added: TLS, or
    /// anything else that sits between the socket and the MQTT bytes.
    public static func custom(host: String, port: Int, isSecure: Bool, configure: @escaping @Sendable (any Channel) throws -> Void) -> MQTTListener {
        MQTTListener(host: host, port: port, transport: .custom(configure, isSecure: isSecure))
    }

    var isSecure: Bool {
        switch transport {
        case .tcp: return false
        case .custom(_, let secure), .layered(let secure, _): return secure
        }
    }

    /// Prepares a new channel and adds the MQTT handler, now or once the transport is ready.
    func configure(_ channel: any Channel, addMQTT: @escaping @Sendable (any Channel) throws -> Void) throws {
        switch transport {
        case .tcp:
            try addMQTT(channel)
        case .custom(let configure, _):
            try configure(channel)
            try addMQTT(channel)
        case .layered(_, let prepare):
            try prepare(channel, addMQTT)
        }
    }
}

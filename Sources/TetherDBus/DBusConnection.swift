public import Logging
import NIOCore
import NIOPosix
import Synchronization
public import TetherCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A client connection to a D-Bus bus over its Unix socket: method calls with their replies,
/// signals as `AsyncSequence`s. Open one with ``withConnection(configuration:logger:_:)``; it is
/// closed when the closure returns.
public final class DBusConnection: Sendable {
    public struct Configuration: Sendable {
        public var address: DBusAddress
        /// How long connecting and authenticating may take.
        public var connectTimeout: Duration = .seconds(5)
        /// How long a call waits for its reply (D-Bus's own default is 25 s).
        public var callTimeout: Duration = .seconds(25)
        /// The longest message accepted from the bus.
        public var maximumMessageLength = 1 << 24

        public init(address: DBusAddress) {
            self.address = address
        }
    }

    typealias Waiter = CheckedContinuation<Result<DBusMessage, TetherError>, Never>
    /// Runs on the connection's event loop for each matching signal: it must not block.
    public typealias SignalHandler = @Sendable (DBusMessage?) -> Void
    typealias Subscriber = SignalHandler
    typealias StateMachine = DBusConnectionStateMachine<Waiter, Subscriber>

    let channel: any Channel
    let configuration: Configuration
    let logger: Logger
    private let machine = Mutex(StateMachine())
    private let readyPromise: EventLoopPromise<String>
    private let exports = Mutex<[String: any DBusObject]>([:])
    /// Calls addressed to this connection, answered in order by the dispatcher of `withConnection`.
    private let incoming = AsyncQueue<DBusMessage>()

    private init(channel: any Channel, configuration: Configuration, logger: Logger) {
        self.channel = channel
        self.configuration = configuration
        self.logger = logger
        self.readyPromise = channel.eventLoop.makePromise()
    }

    /// Connects, authenticates as this process's user and says Hello, runs `body`, then closes.
    public static func withConnection<Result: Sendable>(
        configuration: Configuration, logger: Logger = Logger(label: "tether.dbus"),
        _ body: (DBusConnection) async throws -> Result
    ) async throws -> Result {
        let connection: DBusConnection
        do {
            connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .connect(unixDomainSocketPath: configuration.address.path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let connection = DBusConnection(channel: channel, configuration: configuration, logger: logger)
                        // Also when the socket never connected: nothing may wait on a closed channel.
                        channel.closeFuture.whenComplete { _ in connection.closed(TetherError(.connectionClosed, "the D-Bus connection closed")) }
                        try channel.pipeline.syncOperations.addHandlers([
                            ByteToMessageHandler(DBusFrameDecoder(maximumMessageLength: configuration.maximumMessageLength)),
                            MessageToByteHandler(DBusFrameEncoder()),
                            DBusConnectionHandler(connection: connection),
                        ])
                        return connection
                    }
                }
        } catch {
            throw TetherError(.connectionFailed, "cannot connect to the D-Bus bus at \(configuration.address): \(error)")
        }
        defer { connection.channel.close(promise: nil) }
        let timeout = connection.channel.eventLoop.scheduleTask(in: TimeAmount(configuration.connectTimeout)) {
            connection.readyPromise.fail(TetherError(.timeout, "the D-Bus bus at \(configuration.address) did not accept the connection in time"))
        }
        defer { timeout.cancel() }
        let name = try await connection.readyPromise.futureResult.get()
        connection.logger.debug("connected to D-Bus", metadata: ["dbus.name": "\(name)", "dbus.address": "\(configuration.address)"])
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await connection.dispatchCalls() }
            defer { group.cancelAll() }
            return try await body(connection)
        }
    }

    /// Answers the calls made to this connection's objects, one after the other.
    private func dispatchCalls() async {
        while let call = await incoming.next() {
            let objects = exports.withLock { $0 }
            var reply = DBusStandardInterfaces.answer(call, objects: objects)
            if reply == nil, let object = objects[call.path ?? "/"] {
                reply = await object.handle(call)
            }
            guard !call.flags.contains(.noReplyExpected), var answer = reply else { continue }
            answer.replySerial = call.serial
            answer.destination = call.sender
            do {
                try send(answer)
            } catch {
                logger.warning("a reply could not be sent", metadata: ["dbus.call": "\(call)", "error": "\(error)"])
            }
        }
    }

    /// Offers `object` at `path` until ``unexport(_:)`` or the end of the connection.
    public func export(_ object: any DBusObject, at path: String) throws(TetherError) {
        guard DBusNames.isObjectPath(path) else { throw TetherError(.invalidArgument, "\"\(path.prefix(64))\" is not an object path") }
        exports.withLock { $0[path] = object }
    }

    /// Stops offering the object at `path`.
    public func unexport(_ path: String) {
        _ = exports.withLock { $0.removeValue(forKey: path) }
    }

    /// Signals that properties of an exported object changed (`PropertiesChanged`): how a
    /// BlueZ GATT characteristic notifies its value.
    public func emitPropertiesChanged(path: String, interface: String, changed: [String: DBusValue], invalidated: [String] = []) throws(TetherError) {
        try send(
            .signal(
                path: path, interface: DBusStandardInterfaces.properties, member: "PropertiesChanged",
                body: [.string(interface), .properties(changed), .strings(invalidated)]))
    }

    /// The unique name the bus gave this connection (`:1.42`).
    public var uniqueName: String {
        machine.withLock { $0.uniqueName } ?? ""
    }

    /// Calls a method and returns its reply; an error reply throws ``TetherError/Code/busCallFailed``
    /// with the error's name and text.
    public func call(_ message: DBusMessage, timeout: Duration? = nil) async throws(TetherError) -> DBusMessage {
        let reply = try await exchange(message, timeout: timeout)
        guard reply.kind == .error else { return reply }
        throw TetherError(.busCallFailed, "\(reply.errorName ?? "error"): \(reply.errorText?.prefix(300) ?? "")")
    }

    /// Calls a method and returns its answer, error replies included (for callers that map
    /// error names to their own errors).
    public func exchange(_ message: DBusMessage, timeout: Duration? = nil) async throws(TetherError) -> DBusMessage {
        guard message.kind == .methodCall, !message.flags.contains(.noReplyExpected) else {
            throw TetherError(.invalidArgument, "only a method call that expects a reply has one")
        }
        try message.validate(serialSet: false)
        let outgoing = try machine.withLock { $0.outgoing(message) }.get()
        let serial = outgoing.serial
        let limit = timeout ?? configuration.callTimeout
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(limit)) { [self] in
            run(machine.withLock { $0.abandon(serial: serial, TetherError(.timeout, "no reply to \(outgoing) within \(limit)")) })
        }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                // Waiting before writing: the reply may arrive before this task runs again.
                let action = machine.withLock { $0.wait(serial: serial, waiter) }
                if case .none = action { channel.writeAndFlush(DBusOutbound.message(outgoing), promise: nil) }
                run(action)
            }
        } onCancel: {
            run(machine.withLock { $0.abandon(serial: serial, StateMachine.cancelled) })
        }
        return try result.get()
    }

    /// Sends a message that has no reply (a signal, or a call flagged `noReplyExpected`).
    public func send(_ message: DBusMessage) throws(TetherError) {
        try write(try machine.withLock { $0.outgoing(message) }.get())
    }

    /// The signals `rule` matches, from the moment this returns until the sequence is dropped;
    /// it ends when the connection does.
    public func signals(_ rule: DBusMatchRule) async throws(TetherError) -> AsyncStream<DBusMessage> {
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream()
        let subscription = try await subscribe(rule) { signal in
            if let signal { continuation.yield(signal) } else { continuation.finish() }
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// Calls `handler` with each signal `rule` matches, from the moment this returns until the
    /// subscription is cancelled, and with nil when the connection ends. The handler runs on the
    /// connection's event loop, in the order the signals arrived.
    public func subscribe(_ rule: DBusMatchRule, handler: @escaping SignalHandler) async throws(TetherError) -> Cancellable {
        var owner: String?
        if let sender = rule.sender, !sender.hasPrefix(":") {
            let reply = try? await call(.bus(member: "GetNameOwner", body: [.string(sender)]))
            owner = reply?.body.first?.stringValue
        }
        let id = machine.withLock { $0.subscribe(rule, owner: owner, handler) }
        let subscription = Cancellable { [weak self] in
            guard let self, let rule = machine.withLock({ $0.unsubscribe(id) }) else { return }
            try? send(.bus(member: "RemoveMatch", body: [.string(rule.text)], flags: .noReplyExpected))
        }
        do {
            _ = try await call(.bus(member: "AddMatch", body: [.string(rule.text)]))
        } catch {
            subscription.cancel()
            throw error
        }
        return subscription
    }

    private func write(_ message: DBusMessage) throws(TetherError) {
        // Encoding happens on the event loop; check here so that a bad message is the caller's error.
        try message.validate()
        channel.writeAndFlush(DBusOutbound.message(message), promise: nil)
    }

    // MARK: - The channel's events

    func started() {
        run(machine.withLock { $0.started(uid: UInt32(getuid())) })
    }

    func received(_ inbound: DBusInbound) {
        run(machine.withLock { $0.received(inbound) })
    }

    func closed(_ error: TetherError) {
        incoming.finish()
        let (startup, waiters, subscribers) = machine.withLock { $0.closed(error) }
        if let startup { readyPromise.fail(startup) }
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
        for subscriber in subscribers { subscriber(nil) }
    }

    private func run(_ action: StateMachine.Action) {
        switch action {
        case .none: break
        case .write(let outbound): channel.writeAndFlush(outbound, promise: nil)
        case .writeAll(let outbounds):
            for outbound in outbounds { channel.write(outbound, promise: nil) }
            channel.flush()
        case .ready(let name): readyPromise.succeed(name)
        case .failStartup(let error):
            readyPromise.fail(error)
            channel.close(promise: nil)
        case .resume(let waiter, let result): waiter.resume(returning: result)
        case .deliver(let subscribers, let message):
            for subscriber in subscribers { subscriber(message) }
        case .dispatch(let call):
            incoming.append(call)
        }
    }
}

extension DBusMessage {
    /// A call to the bus itself (`org.freedesktop.DBus`).
    static func bus(member: String, body: [DBusValue] = [], flags: Flags = []) -> DBusMessage {
        .methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member, body: body, flags: flags)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// Hands the channel's events to the connection.
final class DBusConnectionHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = DBusInbound

    let connection: DBusConnection

    init(connection: DBusConnection) {
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        connection.started()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.received(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed(TetherError(.connectionClosed, "the D-Bus connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason = (error as? TetherError) ?? TetherError(.connectionClosed, "the D-Bus connection failed: \(error)")
        connection.logger.warning("D-Bus connection failed", metadata: ["error": "\(reason)"])
        connection.closed(reason)
        context.close(promise: nil)
    }
}

public import Logging
public import NIOCore
import NIOPosix
import Synchronization
public import TetherCore
public import TetherCloudProtocol
import TetherWebSocketClient

/// How a ``CloudRealtime`` connection reaches the cloud's WebSocket M2M API.
public struct CloudRealtimeConfiguration: Sendable {
    /// The cloud; the WebSocket is at `/ws/app/v1` on the same host and port (a Tether cloud
    /// serves both on its HTTP port).
    public var endpoint: CloudEndpoint
    /// The app ID the login carries.
    public var appID: String
    /// How often a ping is sent (the cloud closes a connection silent for 1.5 × this).
    public var heartbeat: Duration
    /// How long a request (login, subscribe, write, read) waits for its answer.
    public var requestTimeout: Duration
    /// Delays between reconnection attempts.
    public var reconnect: ReconnectPolicy

    /// A configuration; only the endpoint and app ID are required.
    public init(
        endpoint: CloudEndpoint, appID: String, heartbeat: Duration = .seconds(60), requestTimeout: Duration = .seconds(10),
        reconnect: ReconnectPolicy = ReconnectPolicy()
    ) {
        self.endpoint = endpoint
        self.appID = appID
        self.heartbeat = heartbeat
        self.requestTimeout = requestTimeout
        self.reconnect = reconnect
    }
}

/// What the cloud pushes, and what happens to the connection.
public enum CloudRealtimeEvent: Sendable, Hashable {
    /// Logged in (again): subscriptions are back in place.
    case connected
    /// The connection ended; it is being re-established.
    case disconnected(TetherError?)
    /// A device's data points (`s2c_noti`); `sn` when it answers a write that had one.
    case status(did: String, attrs: JSONObject, sn: Int?)
    case online(did: String, online: Bool)
    case bindingChanged(did: String, bound: Bool)
    case raw(did: String, bytes: [UInt8])
    /// An event a device posted (Tether's `s2c_event`): `type` is `info`, `alert` or `error`.
    case event(did: String, identifier: String, type: String, values: JSONValue)
    /// What an Alink device published on one of its custom topics (Tether's `s2c_user_topic`).
    case userTopic(did: String, topic: String, payload: [UInt8])
    /// A firmware upgrade of a subscribed device moved on (Tether's `s2c_upgrade`).
    case upgrade(FirmwareUpgrade)
    /// A new entry of the user's message centre (Tether's `s2c_message`): an invitation arrived,
    /// was answered, cancelled or revoked.
    case message(CloudMessage)
    /// A device presented one of the user's pairing tokens (Tether's `s2c_pairing`): bound, or
    /// refused and why.
    case pairing(PairingStatus)
    /// One of the user's schedules was created, changed or deleted (Tether's `s2c_schedules`).
    case schedules(ScheduleChange)
    /// A write that the cloud had accepted failed later (the device rejected it, or it expired).
    case writeFailed(did: String, sn: Int, error: TetherError)
}

/// The device accepted a write (`s2c_ack`).
public struct CloudWriteAcknowledgement: Sendable, Hashable {
    /// The write's `req_sn`, which the report that applies it carries too.
    public var sn: Int
    /// The cloud's ledger entry for the write (``TetherCloudAPI/command(_:id:)``).
    public var commandID: Int64?
}

/// The cloud's WebSocket M2M API with its connection kept up: it logs in with the current
/// session, resubscribes after every reconnect, and matches answers to requests by `sn`.
///
/// ```swift
/// try await CloudRealtime.withRealtime(configuration: .init(endpoint: endpoint, appID: appID), session: { session }) { realtime in
///     _ = try await realtime.subscribe([did])
///     let ack = try await realtime.write(did: did, attrs: ["LightSwitch": true])
///     for await event in realtime.events() { print(event) }
/// }
/// ```
public final class CloudRealtime: Sendable {
    /// What the connection was made with.
    public let configuration: CloudRealtimeConfiguration
    let sessionProvider: @Sendable () async throws -> CloudSession
    let logger: Logger
    let group: any EventLoopGroup
    private let broadcast = Broadcast<CloudRealtimeEvent>(bufferSize: 4096)

    private typealias Machine = CloudRealtimeStateMachine<
        AsyncPromise<M2MLoginResult, TetherError>, AsyncPromise<M2MSubscribeResult, TetherError>,
        AsyncPromise<CloudWriteAcknowledgement, TetherError>, AsyncPromise<JSONObject, TetherError>
    >

    private struct State {
        /// The protocol: phase, subscriptions, requests waiting for their answers.
        var machine = Machine()
        /// The socket of the connection the machine's phase describes.
        var channel: (any Channel)?
    }

    private let state = Mutex(State())

    /// A connection for ``run()``: `session` is asked for the session before every login.
    public init(
        configuration: CloudRealtimeConfiguration,
        session: @escaping @Sendable () async throws -> CloudSession,
        logger: Logger = Logger(label: "tether.cloud.realtime"),
        group: (any EventLoopGroup)? = nil
    ) {
        self.configuration = configuration
        self.sessionProvider = session
        self.logger = logger
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
    }

    /// Keeps the connection up until the task is cancelled, then closes it and ends
    /// ``events()``. Unlike ``withRealtime(configuration:session:logger:group:_:)``, the first
    /// connection may fail too: every failure is a ``CloudRealtimeEvent/disconnected(_:)``
    /// followed by another attempt.
    public func run() async {
        await run(first: nil)
    }

    /// Connects until cancelled (or, with `first`, until the first attempt fails), then ends
    /// ``events()``. Cancellation closes the connection, which ends the wait for it.
    private func run(first: AsyncPromise<Void, TetherError>?) async {
        await withTaskCancellationHandler {
            await maintain(first: first)
        } onCancel: {
            stop()
        }
        broadcast.finish()
    }

    /// Connects and logs in (the first connection must succeed), runs `body`, then closes.
    /// `session` is asked for the session before every login, so a renewed token is used.
    public static func withRealtime<Result: Sendable>(
        configuration: CloudRealtimeConfiguration,
        session: @escaping @Sendable () async throws -> CloudSession,
        logger: Logger = Logger(label: "tether.cloud.realtime"),
        group: (any EventLoopGroup)? = nil,
        _ body: (CloudRealtime) async throws -> Result
    ) async throws -> Result {
        let realtime = CloudRealtime(configuration: configuration, session: session, logger: logger, group: group)
        let first = AsyncPromise<Void, TetherError>()
        // The connection is a child of this call: it ends before the call returns.
        return try await withThrowingTaskGroup(of: Void.self) { connection in
            connection.addTask { await realtime.run(first: first) }
            defer { connection.cancelAll() }
            try await first.value(ifCancelled: { TetherError(.cancelled, "cancelled while connecting") })
            return try await body(realtime)
        }
    }

    /// Pushes and connection changes from now on.
    public func events() -> AsyncStream<CloudRealtimeEvent> { broadcast.subscribe() }

    /// Whether the connection is up and logged in now.
    public var isConnected: Bool { state.withLock { $0.machine.isOpen } }

    // MARK: Requests

    /// Subscribes to devices (bound ones only); they stay subscribed across reconnects.
    /// Returns the devices the cloud refused, with its code.
    @discardableResult
    public func subscribe(_ dids: [String]) async throws(TetherError) -> [String: Int] {
        guard !dids.isEmpty else { return [:] }
        state.withLock { $0.machine.subscribe(dids) }
        let answer = try await sendSubscribe(dids)
        var failed: [String: Int] = [:]
        for entry in answer.failed {
            if let did = entry.did { failed[did] = entry.errorCode }
        }
        return failed
    }

    /// Stops pushes of a device from being passed on (the M2M API has no unsubscribe; the
    /// device is not subscribed again after a reconnect).
    public func unsubscribe(_ did: String) { state.withLock { $0.machine.unsubscribe(did) } }

    /// Writes data points through the cloud and returns when the device acknowledged them. The
    /// report that shows them applied arrives as ``CloudRealtimeEvent/status(did:attrs:sn:)``
    /// with the same `sn`.
    public func write(did: String, attrs: JSONObject, sn: Int? = nil) async throws(TetherError) -> CloudWriteAcknowledgement {
        let promise = AsyncPromise<CloudWriteAcknowledgement, TetherError>()
        let what = "write to \(did)"
        let number = try start(what) { $0.startWrite(did: did, attrs: attrs, sn: sn, waiter: promise) }
        return try await answer(promise, what) { $0.abandonWrite(number) }
    }

    /// Sends transparent data to the device (`c2s_raw`). The M2M API does not acknowledge it:
    /// this returns once it is sent; answers arrive as ``CloudRealtimeEvent/raw(did:bytes:)``.
    public func sendRaw(did: String, bytes: [UInt8]) throws(TetherError) {
        guard let channel = state.withLock({ $0.machine.isOpen ? $0.channel : nil }) else {
            throw TetherError(.connectionClosed, "the cloud's real-time connection is down; the data for \(did) was not sent")
        }
        send(.raw(M2MRaw(did: did, bytes: bytes)), on: channel)
    }

    /// Reads the device's latest status as the cloud holds it (`c2s_read`).
    public func read(did: String, names: [String] = []) async throws(TetherError) -> JSONObject {
        let promise = AsyncPromise<JSONObject, TetherError>()
        let what = "read of \(did)"
        let number = try start(what) { $0.startRead(did: did, names: names, waiter: promise) }
        return try await answer(promise, what) { $0.abandonRead(number) }
    }

    private func sendSubscribe(_ dids: [String]) async throws(TetherError) -> M2MSubscribeResult {
        let promise = AsyncPromise<M2MSubscribeResult, TetherError>()
        let id = try start("subscription") { $0.startSubscription(dids, waiter: promise) }
        return try await answer(promise, "subscription") { $0.abandonSubscription(id) }
    }

    /// Registers a request with the machine and sends its frame, in one step so that requests
    /// go out in the order they were registered; throws when the connection is not open.
    private func start(_ what: String, _ request: (inout Machine) -> (id: Int, frame: M2MFrame)?) throws(TetherError) -> Int {
        let id = state.withLock { state -> Int? in
            guard let channel = state.channel, let started = request(&state.machine) else { return nil }
            send(started.frame, on: channel)
            return started.id
        }
        guard let id else {
            throw TetherError(.connectionClosed, "the cloud's real-time connection is down; the \(what) was not sent")
        }
        return id
    }

    /// The answer to a request, or a timeout; the machine forgets the request either way.
    private func answer<Value: Sendable>(
        _ promise: AsyncPromise<Value, TetherError>, _ what: String, forget: @escaping @Sendable (inout Machine) -> Void
    ) async throws(TetherError) -> Value {
        let timeout = configuration.requestTimeout
        let result = await promise.result(within: timeout) { .failure(TetherError(.timeout, "no answer to the \(what) within \(timeout)")) }
        state.withLock { forget(&$0.machine) }
        return try result.get()
    }

    private func send(_ frame: M2MFrame, on channel: any Channel) {
        let text = frame.encoded()
        channel.eventLoop.execute {
            channel.writeAndFlush(M2MWebSocketChannel.frame(text, allocator: channel.allocator), promise: nil)
        }
    }

    // MARK: Connection

    /// Connects, and connects again whenever the connection ends. With `first`, a failure of
    /// the first attempt resolves it and ends the loop.
    private func maintain(first: AsyncPromise<Void, TetherError>?) async {
        var attempt = 0
        while !Task.isCancelled, !state.withLock({ $0.machine.isShutDown }) {
            do {
                let channel = try await connect()
                if Task.isCancelled || state.withLock({ $0.machine.isShutDown }) {
                    // Shut down while connecting: shutdown() may not have seen this channel.
                    try? await channel.close()
                    break
                }
                attempt = 0
                first?.resolve(.success(()))
                broadcast.yield(.connected)
                await withTaskGroup(of: Void.self) { heartbeat in
                    heartbeat.addTask { [configuration] in
                        while true {
                            do { try await Task.sleep(for: configuration.heartbeat) } catch { return }
                            self.send(.ping, on: channel)
                        }
                    }
                    // Ends when the connection does: stop() closes it on cancellation.
                    try? await channel.closeFuture.get()
                    heartbeat.cancelAll()
                }
                let lost = TetherError(.connectionClosed, "the cloud's real-time connection closed")
                connectionEnded(lost)
                broadcast.yield(.disconnected(lost))
            } catch {
                if let first, !first.isResolved {
                    first.resolve(.failure(error))
                    return
                }
                broadcast.yield(.disconnected(error))
                logger.debug("cloud real-time connection failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: configuration.reconnect.delay(attempt: attempt))
            attempt += 1
        }
    }

    /// Opens the WebSocket, logs in and resubscribes.
    private func connect() async throws(TetherError) -> any Channel {
        let endpoint = configuration.endpoint
        let upgradedBox = ChannelFutureBox()
        let path = endpoint.basePath + "/ws/app/v1"
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(TimeAmount(configuration.requestTimeout))
                .channelInitializer { [self] channel in
                    channel.eventLoop.makeCompletedFuture {
                        if endpoint.isSecure { try CloudHTTPClient.addTLS(to: channel, host: endpoint.host) }
                        upgradedBox.set(
                            try M2MWebSocketChannel.install(
                                on: channel, host: endpoint.host, port: endpoint.port, path: path, received: { [weak self] text in self?.receive(text) }
                            ))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port).get()
            try await upgradedBox.future?.get()
        } catch {
            throw TetherError(.connectionFailed, "cannot open the cloud's real-time connection at \(endpoint): \(error)")
        }
        let session: CloudSession
        do {
            session = try await sessionProvider()
        } catch let error as TetherError {
            channel.close(promise: nil)
            throw error
        } catch {
            channel.close(promise: nil)
            throw TetherError(.notLoggedIn, "no session for the real-time connection: \(error)")
        }
        let login = AsyncPromise<M2MLoginResult, TetherError>()
        let started = state.withLock { state -> Bool in
            guard state.machine.loginStarted(login) else { return false }
            state.channel = channel
            return true
        }
        guard started else {
            channel.close(promise: nil)
            throw TetherError(.cancelled, "the real-time connection was shut down while it connected")
        }
        send(
            .login(
                M2MLogin(
                    appID: configuration.appID, uid: session.uid, token: session.token, dataFormat: .attributes,
                    heartbeatInterval: min(180, configuration.heartbeat.components.seconds * 2), autoSubscribe: false
                )), on: channel)
        let timeout = configuration.requestTimeout
        let answer = await login.result(within: timeout) { .failure(TetherError(.timeout, "no login_res within \(timeout)")) }
        do throws(TetherError) {
            let result = try answer.get()
            guard result.success else {
                throw TetherError(
                    .notLoggedIn, "the cloud refused the real-time login: \(result.message ?? "")", cloudCode: result.errorCode ?? CloudError.tokenInvalid.code)
            }
            let dids = state.withLock { $0.machine.loggedIn() }
            if !dids.isEmpty { _ = try await sendSubscribe(dids) }
        } catch {
            connectionEnded(TetherError(.connectionClosed, "the real-time login failed: \(error)"))
            channel.close(promise: nil)
            throw error
        }
        return channel
    }

    /// The connection ended (or its login failed): every request waiting on it fails now, since
    /// its answer cannot come on another connection.
    private func connectionEnded(_ error: TetherError) {
        let orphans = state.withLock { state in
            state.channel = nil
            return state.machine.connectionClosed()
        }
        orphans.login?.resolve(.failure(error))
        for promise in orphans.subscriptions { promise.resolve(.failure(error)) }
        for promise in orphans.writes { promise.resolve(.failure(error)) }
        for promise in orphans.reads { promise.resolve(.failure(error)) }
    }

    /// No more connections; the one open now closes.
    private func stop() {
        let channel = state.withLock { state in
            state.machine.shutDown()
            return state.channel
        }
        channel?.close(promise: nil)
    }

    // MARK: Inbound

    /// One text frame from the cloud; anything unreadable is ignored (internal for the fuzz test).
    func receive(_ text: String) {
        let frame: M2MFrame
        do {
            frame = try M2MFrame(decoding: text, maximumLength: .max)
        } catch {
            logger.debug("unreadable frame from the cloud", metadata: ["error": "\(error)"])
            return
        }
        let actions = state.withLock { $0.machine.receive(frame) }
        for action in actions {
            switch action {
            case .answerLogin(let promise, let result): promise.resolve(.success(result))
            case .answerSubscription(let promise, let result): promise.resolve(.success(result))
            case .acknowledgeWrite(let promise, let acknowledgement): promise.resolve(.success(acknowledgement))
            case .failWrite(let promise, let error): promise.resolve(.failure(error))
            case .answerRead(let promise, let attrs): promise.resolve(.success(attrs))
            case .failRead(let promise, let error): promise.resolve(.failure(error))
            case .emit(let event): broadcast.yield(event)
            case .logRefusal(let code): logger.debug("the cloud refused a frame", metadata: ["code": "\(code)"])
            }
        }
    }
}

public import Logging
public import NIOCore
import NIOPosix
import Synchronization
public import TetherCore
import TetherCloudProtocol
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
    public init(endpoint: CloudEndpoint, appID: String, heartbeat: Duration = .seconds(60), requestTimeout: Duration = .seconds(10), reconnect: ReconnectPolicy = ReconnectPolicy()) {
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

    private struct State {
        var channel: (any Channel)?
        var subscribed: Set<String> = []
        /// The connection's own `req_sn`s: callers' sequence numbers (one per device, each
        /// starting at 1) would collide on the shared connection.
        var nextSN = 1
        var writes: [Int: (did: String, sn: Int, promise: AsyncPromise<CloudWriteAcknowledgement, TetherError>)] = [:]
        /// Acknowledged writes whose report has not come yet: wire `req_sn` → the caller's.
        var acknowledgedWrites: [Int: (did: String, sn: Int)] = [:]
        var reads: [Int: AsyncPromise<JSONObject, TetherError>] = [:]
        var login: AsyncPromise<M2MLoginResult, TetherError>?
        var subscribe: [AsyncPromise<M2MSubscribeResult, TetherError>] = []
        var shutDown = false
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
    public var isConnected: Bool { state.withLock { $0.channel != nil && $0.login == nil } }

    // MARK: Requests

    /// Subscribes to devices (bound ones only); they stay subscribed across reconnects.
    /// Returns the devices the cloud refused, with its code.
    @discardableResult
    public func subscribe(_ dids: [String]) async throws(TetherError) -> [String: Int] {
        guard !dids.isEmpty else { return [:] }
        state.withLock { $0.subscribed.formUnion(dids) }
        let answer = try await sendSubscribe(dids)
        var failed: [String: Int] = [:]
        for entry in answer.failed {
            guard let did = entry.did else { continue }
            failed[did] = entry.errorCode
            state.withLock { _ = $0.subscribed.remove(did) }
        }
        return failed
    }

    /// Stops pushes of a device from being passed on (the M2M API has no unsubscribe; the
    /// device is not subscribed again after a reconnect).
    public func unsubscribe(_ did: String) { state.withLock { _ = $0.subscribed.remove(did) } }

    /// Writes data points through the cloud and returns when the device acknowledged them. The
    /// report that shows them applied arrives as ``CloudRealtimeEvent/status(did:attrs:sn:)``
    /// with the same `sn`.
    public func write(did: String, attrs: JSONObject, sn: Int? = nil) async throws(TetherError) -> CloudWriteAcknowledgement {
        let promise = AsyncPromise<CloudWriteAcknowledgement, TetherError>()
        let number = state.withLock { state -> Int in
            let number = state.nextSN
            state.nextSN += 1
            state.writes[number] = (did, sn ?? number, promise)
            return number
        }
        let frame = M2MFrame.write(M2MWrite(sequence: .number(Int64(number)), did: did, attrs: attrs))
        return try await request(frame, promise: promise, what: "write to \(did)") { state in _ = state.writes.removeValue(forKey: number) }
    }

    /// Sends transparent data to the device (`c2s_raw`). The M2M API does not acknowledge it:
    /// this returns once it is sent; answers arrive as ``CloudRealtimeEvent/raw(did:bytes:)``.
    public func sendRaw(did: String, bytes: [UInt8]) throws(TetherError) {
        guard let channel = state.withLock({ $0.login == nil ? $0.channel : nil }) else {
            throw TetherError(.connectionClosed, "the cloud's real-time connection is down; the data for \(did) was not sent")
        }
        send(.raw(M2MRaw(did: did, bytes: bytes)), on: channel)
    }

    /// Reads the device's latest status as the cloud holds it (`c2s_read`).
    public func read(did: String, names: [String] = []) async throws(TetherError) -> JSONObject {
        let promise = AsyncPromise<JSONObject, TetherError>()
        let number = state.withLock { state -> Int in
            defer { state.nextSN += 1 }
            state.reads[state.nextSN] = promise
            return state.nextSN
        }
        let frame = M2MFrame.read(M2MRead(sequence: .number(Int64(number)), did: did, names: names.isEmpty ? nil : names))
        return try await request(frame, promise: promise, what: "read of \(did)") { state in _ = state.reads.removeValue(forKey: number) }
    }

    private func sendSubscribe(_ dids: [String]) async throws(TetherError) -> M2MSubscribeResult {
        let promise = AsyncPromise<M2MSubscribeResult, TetherError>()
        let frame = M2MFrame.subscribe(dids: dids)
        // Answers are matched in order: the waiter joins the queue as its frame is sent.
        return try await request(frame, promise: promise, what: "subscription", register: { $0.subscribe.append(promise) }) { state in
            state.subscribe.removeAll { $0 === promise }
        }
    }

    private func request<Value: Sendable>(
        _ frame: M2MFrame, promise: AsyncPromise<Value, TetherError>, what: String,
        register: (inout State) -> Void = { _ in }, cleanup: @escaping @Sendable (inout State) -> Void
    ) async throws(TetherError) -> Value {
        let sent = state.withLock { state -> Bool in
            guard let channel = state.channel else {
                cleanup(&state)
                return false
            }
            register(&state)
            send(frame, on: channel)
            return true
        }
        guard sent else {
            throw TetherError(.connectionClosed, "the cloud's real-time connection is down; the \(what) was not sent")
        }
        let timeout = configuration.requestTimeout
        let result = await promise.result(within: timeout) { .failure(TetherError(.timeout, "no answer to the \(what) within \(timeout)")) }
        state.withLock { cleanup(&$0) }
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
        while !Task.isCancelled, !state.withLock({ $0.shutDown }) {
            do {
                let channel = try await connect()
                if Task.isCancelled || state.withLock({ $0.shutDown }) {
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
                // Every request in flight fails now: its answer cannot come on a new connection,
                // and a stale subscription waiter would take the new connection's answer.
                let (writes, reads, subscriptions) = state.withLock { state in
                    state.channel = nil
                    defer {
                        state.writes = [:]
                        state.reads = [:]
                        state.subscribe = []
                    }
                    return (state.writes.values.map(\.promise), Array(state.reads.values), state.subscribe)
                }
                let lost = TetherError(.connectionClosed, "the cloud's real-time connection closed")
                for promise in writes { promise.resolve(.failure(lost)) }
                for promise in reads { promise.resolve(.failure(lost)) }
                for promise in subscriptions { promise.resolve(.failure(lost)) }
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
                        upgradedBox.set(try M2MWebSocketChannel.install(
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
        state.withLock { state in
            state.channel = channel
            state.login = login
        }
        send(.login(M2MLogin(
            appID: configuration.appID, uid: session.uid, token: session.token, dataFormat: .attributes,
            heartbeatInterval: min(180, configuration.heartbeat.components.seconds * 2), autoSubscribe: false
        )), on: channel)
        let timeout = configuration.requestTimeout
        let answer = await login.result(within: timeout) { .failure(TetherError(.timeout, "no login_res within \(timeout)")) }
        state.withLock { $0.login = nil }
        do {
            let result = try answer.get()
            guard result.success else {
                throw TetherError(.notLoggedIn, "the cloud refused the real-time login: \(result.message ?? "")", cloudCode: result.errorCode ?? CloudError.tokenInvalid.code)
            }
            let dids = state.withLock { Array($0.subscribed) }.sorted()
            if !dids.isEmpty { _ = try await sendSubscribe(dids) }
        } catch let error as TetherError {
            state.withLock { $0.channel = nil }
            channel.close(promise: nil)
            throw error
        } catch {
            state.withLock { $0.channel = nil }
            channel.close(promise: nil)
            throw TetherError(.connectionClosed, "the real-time login failed: \(error)")
        }
        return channel
    }

    /// No more connections; the one open now closes.
    private func stop() {
        let channel = state.withLock { state in
            state.shutDown = true
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
        switch frame {
        case .loginResult(let result):
            state.withLock { $0.login }?.resolve(.success(result))
        case .subscribeResult(let result):
            let waiter = state.withLock { state in state.subscribe.isEmpty ? nil : state.subscribe.removeFirst() }
            waiter?.resolve(.success(result))
        case .writeAcknowledged(let acknowledgement):
            guard let sn = acknowledgement.sequence?.number.map(Int.init) else { return }
            let waiter = state.withLock { state -> (did: String, sn: Int, promise: AsyncPromise<CloudWriteAcknowledgement, TetherError>)? in
                guard let waiter = state.writes.removeValue(forKey: sn) else { return nil }
                // A report that never comes must not keep its entry forever: wire numbers only
                // grow, so the oldest go first.
                if state.acknowledgedWrites.count >= 4096 {
                    let oldest = state.nextSN - 2048
                    state.acknowledgedWrites = state.acknowledgedWrites.filter { $0.key >= oldest }
                }
                state.acknowledgedWrites[sn] = (waiter.did, waiter.sn)
                return waiter
            }
            waiter?.promise.resolve(.success(CloudWriteAcknowledgement(sn: waiter?.sn ?? sn, commandID: acknowledgement.commandID)))
        case .notification(let notification):
            let sn = notification.answering?.number.map(Int.init)
            if let sn, let read = state.withLock({ $0.reads.removeValue(forKey: sn) }) {
                read.resolve(.success(notification.attrs))
                return
            }
            // The caller's sn of the write this report answers; nil for a report nobody here asked for.
            let answered: Int? = sn.flatMap { sn in
                state.withLock { state in state.acknowledgedWrites.removeValue(forKey: sn)?.sn ?? state.writes[sn]?.sn }
            }
            guard isSubscribed(notification.did) else { return }
            broadcast.yield(.status(did: notification.did, attrs: notification.attrs, sn: answered))
        case .invalid(let invalid):
            let error = TetherError(.cloudRefused, invalid.message.isEmpty ? "refused" : invalid.message, cloudCode: invalid.errorCode)
            guard let sn = invalid.sequence?.number.map(Int.init) else {
                logger.debug("the cloud refused a frame", metadata: ["code": "\(invalid.errorCode)"])
                return
            }
            let (write, read, acknowledged) = state.withLock { state in
                (state.writes.removeValue(forKey: sn), state.reads.removeValue(forKey: sn), state.acknowledgedWrites.removeValue(forKey: sn))
            }
            if let write { write.promise.resolve(.failure(error)) }
            if let read { read.resolve(.failure(error)) }
            if let acknowledged {
                broadcast.yield(.writeFailed(did: acknowledged.did, sn: acknowledged.sn, error: error))
            }
        case .onlineStatus(let status):
            guard isSubscribed(status.did) else { return }
            broadcast.yield(.online(did: status.did, online: status.online))
        case .bindingChanged(let did, let bound):
            if !bound { unsubscribe(did) }
            broadcast.yield(.bindingChanged(did: did, bound: bound))
        case .rawReport(let raw):
            guard isSubscribed(raw.did) else { return }
            broadcast.yield(.raw(did: raw.did, bytes: raw.bytes))
        case .event(let event):
            guard isSubscribed(event.did) else { return }
            broadcast.yield(.event(did: event.did, identifier: event.identifier, type: event.type, values: event.values))
        case .pong, .login, .subscribe, .write, .read, .raw, .acknowledge, .ping:
            break
        }
    }

    private func isSubscribed(_ did: String) -> Bool { state.withLock { $0.subscribed.contains(did) } }
}

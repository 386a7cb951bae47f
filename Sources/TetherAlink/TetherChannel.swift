public import Logging
public import NIOCore
import Synchronization
public import TetherCore
public import TetherMQTT

/// The phone as a device of the IoT platform, with a request/response and publish/subscribe
/// channel to the cloud: what Aliyun's iOS channel SDK (`IMLChannelCore`, `LKIoTExpress`)
/// offers, in Swift.
///
/// ```swift
/// let device = try AlinkDeviceIdentity(productKey: pk, deviceName: dn)
/// try await TetherChannel.withChannel(configuration: .init(host: "127.0.0.1", device: device, deviceSecret: secret)) { channel in
///     let reply = try await channel.invoke(topic: "/sys/\(pk)/\(dn)/account/bind", params: ["iotToken": .string(token)])
///     try await channel.subscribe(topic: "/sys/\(pk)/\(dn)/app/down/event")
///     for await message in channel.messages(shouldHandle: { $0.hasSuffix("/app/down/event") }) {
///         print(message.topic, message.json ?? "raw")
///     }
/// }
/// ```
///
/// Every failure is a `TetherError`: `timeout` when no `topic_reply` comes in time,
/// `cloudRefused` (the reply's code in `cloudCode`) when the reply is not a success,
/// `connectionFailed` when the broker cannot be reached or refuses a publication or subscription,
/// `invalidArgument` for a topic or an extra parameter that cannot be used.
public final class TetherChannel: Sendable {
    public let configuration: TetherChannelConfiguration
    /// The underlying MQTT connection, for what the channel does not cover.
    public let mqtt: MQTTClient
    private let logger: Logger
    private let downstream = Broadcast<ChannelMessage>(bufferSize: 1024)
    private let stateBroadcast = Broadcast<ChannelState>(bufferSize: 64)

    private let waiters = AlinkReplyWaiters()

    private struct State {
        var connection = ChannelState.connected
        /// `_reply` topics subscribed to so far.
        var replyTopics: Set<String> = []
    }
    private let state = Mutex(State())

    private init(configuration: TetherChannelConfiguration, mqtt: MQTTClient, logger: Logger) {
        self.configuration = configuration
        self.mqtt = mqtt
        self.logger = logger
    }

    /// Connects (the first connection must succeed: its failure is thrown), runs `body` with the
    /// channel, then disconnects. Requests still waiting when `body` ends fail with `cancelled`.
    public static func withChannel<Result: Sendable>(
        configuration: TetherChannelConfiguration,
        logger: Logger = Logger(label: "tether.channel"),
        group: (any EventLoopGroup)? = nil,
        _ body: (TetherChannel) async throws -> Result
    ) async throws -> Result {
        try AlinkLimits.checkKeepAlive(configuration.keepAlive)
        var logger = logger
        logger[metadataKey: "alink.device"] = "\(configuration.device)"
        let mqttConfiguration = configuration.mqtt
        do {
            return try await MQTTClient.withClient(configuration: mqttConfiguration, logger: logger, group: group) { mqtt in
                let channel = TetherChannel(configuration: configuration, mqtt: mqtt, logger: logger)
                do {
                    return try await channel.run(body)
                } catch {
                    throw BodyFailure(error: error)
                }
            }
        } catch let failure as BodyFailure {
            // What `body` threw is the caller's own, MQTT errors included: never "cannot connect".
            throw failure.error
        } catch let error as MQTTError {
            throw TetherError(.connectionFailed, "the channel cannot connect to \(configuration.host):\(configuration.port): \(error)")
        }
    }

    private struct BodyFailure: Error {
        let error: any Error
    }

    private func run<Result: Sendable>(_ body: (TetherChannel) async throws -> Result) async throws -> Result {
        let messages = mqtt.messages()
        let events = mqtt.events()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in messages { self.receive(message) }
            }
            group.addTask {
                for await event in events { self.apply(event) }
            }
            defer { group.cancelAll() }
            do {
                let result = try await body(self)
                waiters.failAll(TetherError(.cancelled, "the channel is closing"))
                return result
            } catch {
                waiters.failAll(TetherError(.cancelled, "the channel is closing"))
                throw error
            }
        }
    }

    // MARK: Connection state

    /// How the channel is to the broker now.
    public var connectionState: ChannelState { state.withLock { $0.connection } }

    /// Changes of ``connectionState`` from now on (the seed's connect listener).
    public func stateChanges() -> AsyncStream<ChannelState> { stateBroadcast.subscribe() }

    private func apply(_ event: MQTTClientEvent) {
        let next: ChannelState
        switch event {
        case .connected: next = .connected
        case .disconnected(let error): next = .disconnected(reason: error.map { "\($0)" })
        case .reconnecting: next = .connecting
        }
        let changed = state.withLock { state -> Bool in
            guard state.connection != next else { return false }
            state.connection = next
            return true
        }
        if changed { stateBroadcast.yield(next) }
    }

    // MARK: Upstream

    /// Sends the request envelope on `topic` and waits for the answer on `topic + "_reply"`
    /// with the same `id`. Returns the reply when its code is 200.
    ///
    /// - Throws: `timeout` without a reply in time; `cloudRefused` with the reply's code in
    ///   `cloudCode` when it is not 200; `connectionFailed` when the request cannot be sent.
    public func invoke(topic: String, params: JSONValue, options: ChannelInvokeOptions = .init()) async throws(TetherError) -> AlinkReply {
        let replyTopic = topic + "_reply"
        try validate(topic: topic)
        try await subscribeToReplies(replyTopic)
        let timeout = options.timeout ?? configuration.replyTimeout
        let reply = try await waiters.request(timeout: timeout, describing: "the request on \(topic)") { id throws(TetherError) in
            let request = try ChannelRequest(id: id, timeMs: configuration.now() * 1000, params: params, extraParams: options.extraParams)
            try await send(topic: topic, payload: request.bytes, qos: .atLeastOnce)
        }
        guard reply.isSuccess else {
            throw TetherError(.cloudRefused, "the request on \(topic) was answered \(reply.code): \(reply.message)", cloudCode: reply.code)
        }
        return reply
    }

    /// Sends `params` in the request envelope on `topic`; no reply is awaited.
    public func publish(topic: String, params: JSONValue) async throws(TetherError) {
        try validate(topic: topic)
        let request = try ChannelRequest(id: waiters.nextID(), timeMs: configuration.now() * 1000, params: params)
        try await send(topic: topic, payload: request.bytes, qos: .atLeastOnce)
    }

    /// Sends `data` on `topic` as it is, without the envelope.
    public func uploadData(topic: String, data: [UInt8]) async throws(TetherError) {
        try validate(topic: topic)
        try await send(topic: topic, payload: data, qos: .atLeastOnce)
    }

    // MARK: Downstream

    /// Subscribes to `topic` (a filter: `+` and `#` allowed); its messages arrive on
    /// ``messages(shouldHandle:)``, across reconnections. Throws `connectionFailed` when the
    /// broker refuses it.
    public func subscribe(topic: String) async throws(TetherError) {
        let codes: [MQTTReasonCode]
        do {
            codes = try await mqtt.subscribe([MQTTTopicSubscription(filter: topic, qos: .atLeastOnce)])
        } catch {
            throw Self.translate(error, "subscribe to \(topic)")
        }
        if let refused = codes.first(where: \.isFailure) {
            throw TetherError(.connectionFailed, "the broker refused the subscription to \(topic) (\(refused))")
        }
    }

    /// Ends the subscription to `topic`.
    public func unsubscribe(topic: String) async throws(TetherError) {
        let codes: [MQTTReasonCode]
        do {
            codes = try await mqtt.unsubscribe([topic])
        } catch {
            throw Self.translate(error, "unsubscribe from \(topic)")
        }
        if let refused = codes.first(where: \.isFailure) {
            throw TetherError(.connectionFailed, "the broker refused to end the subscription to \(topic) (\(refused))")
        }
    }

    /// Messages on subscribed topics from now on, those `shouldHandle` accepts (the seed's
    /// `LKExpressDownListener`). Replies that answer an ``invoke(topic:params:options:)`` are
    /// not among them.
    public func messages(shouldHandle: @escaping @Sendable (String) -> Bool = { _ in true }) -> some AsyncSequence<ChannelMessage, Never> & Sendable {
        downstream.subscribe().filter { shouldHandle($0.topic) }
    }

    // MARK: Internals

    private func validate(topic: String) throws(TetherError) {
        do {
            try MQTTTopic.validateName(topic)
        } catch {
            throw TetherError(.invalidArgument, "\"\(topic.prefix(80))\" is not a topic to publish on: \(error.message)")
        }
    }

    private func subscribeToReplies(_ replyTopic: String) async throws(TetherError) {
        guard state.withLock({ !$0.replyTopics.contains(replyTopic) }) else { return }
        try await subscribe(topic: replyTopic)
        state.withLock { _ = $0.replyTopics.insert(replyTopic) }
    }

    private func send(topic: String, payload: [UInt8], qos: MQTTQoS) async throws(TetherError) {
        do {
            try await mqtt.publish(MQTTMessage(topic: topic, payload: ByteBuffer(bytes: payload), qos: qos))
        } catch {
            throw Self.translate(error, "publish on \(topic)")
        }
    }

    private static func translate(_ error: MQTTError, _ what: String) -> TetherError {
        if error.code == .timeout { return TetherError(.timeout, "cannot \(what): \(error)") }
        return TetherError(.connectionFailed, "cannot \(what): \(error)")
    }

    private func receive(_ message: MQTTMessage) {
        let bytes = Array(message.payload.readableBytesView)
        if message.topic.hasSuffix("_reply"), let reply = try? AlinkReply(parsing: bytes), waiters.resolve(reply) { return }
        downstream.yield(ChannelMessage(topic: message.topic, payload: bytes))
    }
}

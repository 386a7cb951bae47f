public import Logging
public import NIOCore
public import TetherCore
public import TetherMQTT
import Synchronization

/// A request from the cloud to a device: a property set or get, a service call, raw bytes, an
/// RRPC (system, or custom on a user topic), a shadow pushed, or an upgrade offered.
public struct AlinkDownlink: Sendable {
    /// The topic the request came on, which decides where the reply goes.
    public var topic: AlinkDeviceTopic
    /// The Alink request (nil for raw bytes and RRPC, which are opaque).
    public var request: AlinkRequest?
    /// The MQTT payload as received.
    public var payload: ByteBuffer
}

/// The device side of Alink over MQTT: connects with a signed CONNECT, posts properties and
/// events and waits for their replies, and hands the cloud's requests to the caller.
///
/// ```swift
/// try await AlinkDeviceClient.withClient(configuration: .init(host: "127.0.0.1", device: id, deviceSecret: secret)) { device in
///     _ = try await device.postProperties(["LightSwitch": 1])
///     for await downlink in device.downlinks() {
///         if case .propertySet = downlink.topic.topic, let request = downlink.request {
///             try await device.reply(request.reply(), to: downlink)
///         }
///     }
/// }
/// ```
public final class AlinkDeviceClient: Sendable {
    /// The broker, device identity and timeouts the client was started with.
    public let configuration: AlinkDeviceConfiguration
    /// The underlying MQTT connection, for its connection events and for topics Alink does not cover.
    public let mqtt: MQTTClient
    private let logger: Logger
    private let downlinkBroadcast = Broadcast<AlinkDownlink>(bufferSize: 1024)

    private let waiters = AlinkReplyWaiters()
    /// Shadow requests carry no id: the cloud answers them in order, so the oldest waiter takes
    /// the next reply. A waiter that timed out stays in line, so a late reply cannot be taken
    /// for the answer to a later request.
    private let shadowWaiters = Mutex<[AsyncPromise<ShadowReply, TetherError>]>([])
    /// Sub-devices logged in through this connection (a gateway's), whose topics it carries.
    private let subDevices = Mutex<Set<AlinkDeviceIdentity>>([])

    private init(configuration: AlinkDeviceConfiguration, mqtt: MQTTClient, logger: Logger) {
        self.configuration = configuration
        self.mqtt = mqtt
        self.logger = logger
    }

    /// Connects (the first connection must succeed), runs `body`, then disconnects.
    public static func withClient<Result: Sendable>(
        configuration: AlinkDeviceConfiguration,
        logger: Logger = Logger(label: "tether.alink.device"),
        group: (any EventLoopGroup)? = nil,
        _ body: (AlinkDeviceClient) async throws -> Result
    ) async throws -> Result {
        try AlinkLimits.checkKeepAlive(configuration.keepAlive)
        let device = configuration.device
        let base = "/sys/\(device.productKey)/\(device.deviceName)"
        let filters = [
            "\(base)/thing/service/+", "\(base)/thing/service/property/+", "\(base)/thing/event/+/post_reply",
            "\(base)/thing/model/down_raw", "\(base)/thing/model/up_raw_reply", "\(base)/rrpc/request/+",
            AlinkDeviceTopic(device: device, topic: .shadowGet).name, AlinkDeviceTopic(device: device, topic: .firmwareUpgrade).name,
            "\(base)/thing/ota/firmware/get_reply",
        ].map { MQTTTopicSubscription(filter: $0, qos: .atLeastOnce) }
        var logger = logger
        logger[metadataKey: "alink.device"] = "\(device)"
        return try await MQTTClient.withClient(configuration: configuration.mqtt, logger: logger, group: group) { mqtt in
            let client = AlinkDeviceClient(configuration: configuration, mqtt: mqtt, logger: logger)
            guard configuration.subscribesExplicitly else {
                return try await client.run(receiving: mqtt.messages(), body)
            }
            return try await mqtt.subscribe(to: filters) { messages in
                try await client.run(receiving: messages, body)
            }
        }
    }

    private func run<Result: Sendable, Messages: AsyncSequence & Sendable>(
        receiving messages: Messages,
        _ body: (AlinkDeviceClient) async throws -> Result
    ) async throws -> Result where Messages.Element == MQTTMessage {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await message in messages { self.receive(message) }
            }
            let connection = mqtt.events()
            group.addTask {
                // Shadow replies carry no id: one lost with a connection must not answer a later request.
                for await event in connection {
                    if case .disconnected = event { self.failShadowWaiters(TetherError(.connectionFailed, "the connection dropped before the shadow reply")) }
                }
            }
            defer { group.cancelAll() }
            let result = try await body(self)
            let closing = TetherError(.cancelled, "the device client is closing")
            waiters.failAll(closing)
            failShadowWaiters(closing)
            return result
        }
    }

    private func failShadowWaiters(_ error: TetherError) {
        let waiting = shadowWaiters.withLock { waiters in
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resolve(.failure(error)) }
    }

    /// Requests from the cloud from now on.
    public func downlinks() -> AsyncStream<AlinkDownlink> { downlinkBroadcast.subscribe() }

    /// Posts property values (`thing.event.property.post`) and returns the cloud's reply; a
    /// reply with a code other than 200 is returned, not thrown.
    public func postProperties(_ params: JSONValue) async throws(TetherError) -> AlinkReply {
        try await request(.propertyPost, method: "thing.event.property.post", params: params)
    }

    /// Posts an event (`thing.event.{identifier}.post`) with its output values.
    public func postEvent(_ identifier: String, value: JSONValue) async throws(TetherError) -> AlinkReply {
        try await request(.eventPost(identifier), method: "thing.event.\(identifier).post", params: ["value": value])
    }

    /// Sends raw bytes up (`thing/model/up_raw`), for products whose data is not JSON.
    public func postRaw(_ bytes: [UInt8]) async throws(TetherError) {
        try await publish(.upRaw, payload: ByteBuffer(bytes: bytes), qos: .atLeastOnce)
    }

    /// Sends a shadow request (`/shadow/update/{pk}/{dn}`) and returns the cloud's answer: the
    /// shadow for ``ShadowRequest/get``, the new version for an update or delete, or the
    /// refusal (409 when `version` is not greater than the shadow's). Shadows pushed by the
    /// cloud when an app changes what it desires come through ``downlinks()`` (topic
    /// `.shadowGet`; read them with ``ShadowReply/init(parsing:maximumSize:)``).
    public func shadow(_ request: ShadowRequest) async throws(TetherError) -> ShadowReply {
        let answer = AsyncPromise<ShadowReply, TetherError>()
        shadowWaiters.withLock { $0.append(answer) }
        try await publish(.shadowUpdate, payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        let timeout = configuration.replyTimeout
        return try await answer.result(within: timeout) {
            .failure(TetherError(.timeout, "no answer to the shadow request within \(timeout)"))
        }.get()
    }

    /// Tells the cloud which firmware version a module runs (`/ota/device/inform/{pk}/{dn}`):
    /// after connecting, and after an upgrade (which completes it). No answer comes.
    public func reportFirmwareVersion(_ version: String, module: String = "default") async throws(TetherError) {
        guard FirmwareLimits.isName(version), FirmwareLimits.isName(module) else {
            throw TetherError(.invalidArgument, "a firmware version and module are 1 to 64 printable characters without spaces or /")
        }
        let report = FirmwareVersionReport(id: waiters.nextID(), version: version, module: module)
        try await publish(.firmwareInform, payload: ByteBuffer(bytes: report.bytes), qos: .atLeastOnce)
    }

    /// Tells the cloud how far an upgrade went (`/ota/device/progress/{pk}/{dn}`): 1…100 percent,
    /// or one of the negative failure steps. No answer comes.
    public func reportUpgradeProgress(step: Int, desc: String = "", module: String = "default") async throws(TetherError) {
        guard (-4...100).contains(step), FirmwareLimits.isName(module) else {
            throw TetherError(.invalidArgument, "an upgrade step is -4 to 100, for a module named 1 to 64 printable characters")
        }
        let report = FirmwareProgressReport(id: waiters.nextID(), step: step, desc: desc, module: module)
        try await publish(.firmwareProgress, payload: ByteBuffer(bytes: report.bytes), qos: .atLeastOnce)
    }

    /// Asks the cloud for the upgrade waiting for this device (`thing/ota/firmware/get`); nil
    /// when there is none. Upgrades the cloud pushes arrive through ``downlinks()`` (topic
    /// `.firmwareUpgrade`; read them with ``FirmwareUpgradeNotice/init(parsing:)``).
    public func queryFirmware(module: String? = nil) async throws(TetherError) -> FirmwareUpgradeNotice? {
        var params = JSONObject()
        if let module { params["module"] = .string(module) }
        let reply = try await request(.firmwareGet, method: "thing.ota.firmware.get", params: .object(params))
        guard reply.isSuccess else { throw TetherError(.cloudRefused, "the cloud answered the firmware query with \(reply.code): \(reply.message)") }
        return try FirmwareUpgradeNotice(parsing: reply.bytes)
    }

    /// The cloud's keys for LAN grants (``AlinkTopic/lanGrantKeyGet``, a Tether extension), which
    /// the device keeps to check the grants apps log in with. A reply other than 200 is thrown
    /// (`cloudRefused`): a cloud without the extension.
    public func lanGrantKeys() async throws(TetherError) -> LANGrantKeySet {
        let reply = try await request(.lanGrantKeyGet, method: LANGrantKeySet.method, params: .object([:]))
        guard reply.isSuccess else { throw TetherError(.cloudRefused, "the cloud answered the grant-key query with \(reply.code): \(reply.message)") }
        return try LANGrantKeySet(data: reply.data)
    }

    /// Presents the pairing token the device's user gave it with the Wi-Fi credentials
    /// (``AlinkTopic/pairingActivate``, a Tether extension); the reply says whether the device is
    /// now bound to that user (200) or why not (the cloud's codes: 9513 unknown, 9514 expired,
    /// 9515 used, 9516 for another product, or the binding's own).
    public func activate(_ activation: PairingActivation) async throws(TetherError) -> AlinkReply {
        try await request(.pairingActivate, method: PairingActivation.method, params: .object(activation.params))
    }

    // MARK: Gateways and their sub-devices

    /// Adds sub-devices to this gateway's topology (`thing/topo/add`), proving each with its
    /// secret; returns the ones the cloud added. A reply other than 200 is thrown (`cloudRefused`).
    @discardableResult
    public func addSubDevices(_ devices: [(device: AlinkDeviceIdentity, secret: String)]) async throws(TetherError) -> [AlinkDeviceIdentity] {
        let now = configuration.now() * 1000
        let signIns = devices.map { SubDeviceSignIn.signed($0.device, secret: $0.secret, atMilliseconds: now) }
        return try await subDeviceRequest(.system("thing/topo/add")) { id in SubDeviceMessages.topoAdd(id: id, signIns) }
    }

    /// Removes sub-devices from this gateway's topology (`thing/topo/delete`).
    @discardableResult
    public func removeSubDevices(_ devices: [AlinkDeviceIdentity]) async throws(TetherError) -> [AlinkDeviceIdentity] {
        subDevices.withLock { $0.subtract(devices) }
        return try await subDeviceRequest(.system("thing/topo/delete")) { id in SubDeviceMessages.list(id: id, method: "thing.topo.delete", devices) }
    }

    /// This gateway's sub-devices (`thing/topo/get`).
    public func topology() async throws(TetherError) -> [AlinkDeviceIdentity] {
        try await subDeviceRequest(.system("thing/topo/get")) { id in AlinkRequest(id: id, method: "thing.topo.get", params: .object([:])) }
    }

    /// Brings sub-devices online through this connection (`combine/batch_login`): they must be in
    /// the gateway's topology. Their topics then travel over this connection: post for them with
    /// ``postProperties(_:for:)``; requests for them arrive in ``downlinks()`` with their own
    /// ``AlinkDeviceTopic/device``.
    @discardableResult
    public func loginSubDevices(_ devices: [(device: AlinkDeviceIdentity, secret: String)]) async throws(TetherError) -> [AlinkDeviceIdentity] {
        let now = configuration.now() * 1000
        let signIns = devices.map { SubDeviceSignIn.signed($0.device, secret: $0.secret, atMilliseconds: now) }
        let online = try await subDeviceRequest(.session("combine/batch_login")) { id in SubDeviceMessages.login(id: id, signIns) }
        subDevices.withLock { $0.formUnion(online) }
        return online
    }

    /// Takes sub-devices offline (`combine/batch_logout`).
    @discardableResult
    public func logoutSubDevices(_ devices: [AlinkDeviceIdentity]) async throws(TetherError) -> [AlinkDeviceIdentity] {
        let offline = try await subDeviceRequest(.session("combine/batch_logout")) { id in
            SubDeviceMessages.list(id: id, method: "combine.logout", devices)
        }
        subDevices.withLock { $0.subtract(devices) }
        return offline
    }

    /// Posts property values for a sub-device logged in through this connection.
    public func postProperties(_ params: JSONValue, for subDevice: AlinkDeviceIdentity) async throws(TetherError) -> AlinkReply {
        try await waiters.request(timeout: configuration.replyTimeout, describing: "thing.event.property.post") { id throws(TetherError) in
            let request = AlinkRequest(id: id, method: "thing.event.property.post", params: params)
            try await publish(AlinkDeviceTopic(device: subDevice, topic: .propertyPost), payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        }
    }

    private func subDeviceRequest(_ topic: AlinkTopic, _ make: (String) -> AlinkRequest) async throws(TetherError) -> [AlinkDeviceIdentity] {
        let reply = try await waiters.request(timeout: configuration.replyTimeout, describing: topic.path) { id throws(TetherError) in
            try await publish(topic, payload: ByteBuffer(bytes: make(id).bytes), qos: .atLeastOnce)
        }
        guard reply.isSuccess else { throw TetherError(.cloudRefused, "\(topic.path): \(reply.code) \(reply.message)") }
        return try SubDeviceMessages.devices(reply.data)
    }

    /// Answers a downlink: on the request's `_reply` topic, or on the RRPC response topic.
    public func reply(_ answer: AlinkReply, to downlink: AlinkDownlink) async throws(TetherError) {
        try await reply(payload: ByteBuffer(bytes: answer.bytes), to: downlink)
    }

    /// Answers a downlink with bytes (raw and RRPC replies).
    public func reply(payload: ByteBuffer, to downlink: AlinkDownlink) async throws(TetherError) {
        var topic = downlink.topic
        if downlink.topic.rrpcMessageID == nil {
            switch downlink.topic.topic {
            case .rrpcRequest(let id): topic.topic = .rrpcResponse(id)
            default:
                guard let reply = downlink.topic.topic.reply else {
                    throw TetherError(.invalidArgument, "\(downlink.topic.name) has no reply topic")
                }
                topic.topic = reply
            }
        }
        try await publish(topic, payload: payload, qos: downlink.topic.rrpcMessageID == nil ? .atLeastOnce : .atMostOnce)
    }

    private func request(_ topic: AlinkTopic, method: String, params: JSONValue) async throws(TetherError) -> AlinkReply {
        try await waiters.request(timeout: configuration.replyTimeout, describing: method) { id throws(TetherError) in
            let request = AlinkRequest(id: id, method: method, params: params)
            try await publish(topic, payload: ByteBuffer(bytes: request.bytes), qos: .atLeastOnce)
        }
    }

    private func publish(_ topic: AlinkTopic, payload: ByteBuffer, qos: MQTTQoS) async throws(TetherError) {
        try await publish(AlinkDeviceTopic(device: configuration.device, topic: topic), payload: payload, qos: qos)
    }

    private func publish(_ topic: AlinkDeviceTopic, payload: ByteBuffer, qos: MQTTQoS) async throws(TetherError) {
        do {
            try await mqtt.publish(MQTTMessage(topic: topic.name, payload: payload, qos: qos))
        } catch {
            throw TetherError(.connectionFailed, "cannot publish to \(topic.name): \(error)")
        }
    }

    private func receive(_ message: MQTTMessage) {
        guard let topic = AlinkDeviceTopic(parsing: message.topic),
            topic.device == configuration.device || subDevices.withLock({ $0.contains(topic.device) })
        else {
            logger.debug("ignoring a message for another device", metadata: ["mqtt.topic": "\(message.topic)"])
            return
        }
        let bytes = message.payload.readableBytesView
        switch topic.topic {
        case .propertyPostReply, .eventPostReply, .firmwareGetReply:
            do {
                _ = waiters.resolve(try AlinkReply(parsing: bytes))
            } catch {
                logger.warning("unreadable reply from the cloud", metadata: ["mqtt.topic": "\(message.topic)", "error": "\(error)"])
            }
        case .system(let path) where path.hasSuffix("_reply"), .session(let path) where path.hasSuffix("_reply"):
            do {
                _ = waiters.resolve(try AlinkReply(parsing: bytes))
            } catch {
                logger.warning("unreadable reply from the cloud", metadata: ["mqtt.topic": "\(message.topic)", "error": "\(error)"])
            }
        case .propertySet, .propertyGet, .service:
            do {
                let request = try AlinkRequest(parsing: bytes)
                downlinkBroadcast.yield(AlinkDownlink(topic: topic, request: request, payload: message.payload))
            } catch {
                logger.warning("unreadable request from the cloud", metadata: ["mqtt.topic": "\(message.topic)", "error": "\(error)"])
            }
        case .downRaw, .rrpcRequest, .upRawReply, .firmwareUpgrade:
            downlinkBroadcast.yield(AlinkDownlink(topic: topic, request: nil, payload: message.payload))
        case .shadowGet:
            let reply: ShadowReply
            do {
                reply = try ShadowReply(parsing: bytes)
            } catch {
                logger.warning("unreadable shadow message from the cloud", metadata: ["error": "\(error)"])
                return
            }
            guard case .control = reply else {
                let waiter = shadowWaiters.withLock { waiters in waiters.isEmpty ? nil : waiters.removeFirst() }
                waiter?.resolve(.success(reply))
                return
            }
            downlinkBroadcast.yield(AlinkDownlink(topic: topic, request: nil, payload: message.payload))
        case .user where topic.rrpcMessageID != nil:
            // Custom RRPC on a user topic the caller subscribed (`/ext/rrpc/+/{pk}/{dn}/user/…`).
            downlinkBroadcast.yield(AlinkDownlink(topic: topic, request: nil, payload: message.payload))
        default:
            logger.debug("ignoring an unexpected topic", metadata: ["mqtt.topic": "\(message.topic)"])
        }
    }
}

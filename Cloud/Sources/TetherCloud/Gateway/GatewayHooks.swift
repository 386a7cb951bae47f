import TetherAlink
import TetherMQTT

/// The gateway's say over its broker: Alink authentication, each device confined to its own
/// topics, server-side subscriptions for `_ss=1` devices, and presence handed to the gateway in
/// the order it happens.
struct GatewayHooks: MQTTBrokerHooks {
    let authenticator: DeviceAuthenticator
    let presence: BatchQueue<PresenceChange>
    let subDevices: SubDeviceSessions

    func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        await authenticator.authenticate(request)
    }

    func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool {
        guard let connection = DevicePrincipal(principal), connection.registration == nil else { return false }
        let device = connection.device
        // What only the cloud sends (shadow replies, upgrade offers) a device cannot publish.
        guard let parsed = AlinkDeviceTopic(parsing: topic), parsed.topic != .shadowGet, parsed.topic != .firmwareUpgrade else { return false }
        guard parsed.device == device else {
            // A gateway speaks for the sub-devices it brought online, on their /sys topics only.
            guard topic.hasPrefix("/sys/") || topic.hasPrefix("/ext/rrpc/") else { return false }
            if case .user = parsed.topic { return false }
            if case .session = parsed.topic { return false }
            return subDevices.did(of: parsed.device, via: principal.clientID) != nil
        }
        // A custom topic only as its class allows; on `/ext/rrpc/…` it is the answer to a call.
        if case .user(let path) = parsed.topic, parsed.rrpcMessageID == nil {
            return Self.topicClasses(connection).allowsPublish(path: Substring(path))
        }
        return true
    }

    func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool {
        guard let connection = DevicePrincipal(principal), connection.registration == nil else { return false }
        let device = connection.device
        let userPrefix = "/\(device.productKey)/\(device.deviceName)/user/"
        if filter.hasPrefix(userPrefix) {
            return Self.topicClasses(connection).allowsSubscribe(filter: filter.dropFirst(userPrefix.count))
        }
        let own = [
            "/sys/\(device.productKey)/\(device.deviceName)/",
            "/ext/rrpc/+/sys/\(device.productKey)/\(device.deviceName)/",
            "/ext/rrpc/+/\(device.productKey)/\(device.deviceName)/user/",
        ]
        if own.contains(where: { filter.hasPrefix($0) && filter.count > $0.count }) || filter == "/shadow/get/\(device.productKey)/\(device.deviceName)"
            || filter == "/ota/device/upgrade/\(device.productKey)/\(device.deviceName)"
        {
            return true
        }
        // A sub-device's own /sys topics, while its gateway carries it.
        let levels = filter.split(separator: "/", maxSplits: 4, omittingEmptySubsequences: false)
        guard levels.count == 5, levels[1] == "sys", let sub = try? AlinkDeviceIdentity(productKey: String(levels[2]), deviceName: String(levels[3])),
            !levels[4].isEmpty
        else { return false }
        return subDevices.did(of: sub, via: principal.clientID) != nil
    }

    /// Custom RRPC requests reach a device only from the cloud (addressed, not routed): what a
    /// device publishes on `/ext/rrpc/…` is its answer, for the gateway alone, and must not come
    /// back to it through its own `/ext/rrpc/+/…` subscription as a new request.
    var checksDeliveries: Bool { true }

    func authorizeDelivery(_ principal: MQTTPrincipal, topic: String) -> Bool {
        guard !topic.hasPrefix("/ext/rrpc/") else { return false }
        // A wildcard subscription may match custom topics the device may not receive.
        guard let connection = DevicePrincipal(principal) else { return true }
        let userPrefix = "/\(connection.device.productKey)/\(connection.device.deviceName)/user/"
        guard topic.hasPrefix(userPrefix) else { return true }
        return Self.topicClasses(connection).allowsDelivery(path: topic.dropFirst(userPrefix.count))
    }

    /// The classes the device connected with; none when they do not read (nothing custom is allowed then).
    static func topicClasses(_ connection: DevicePrincipal) -> AlinkTopicClasses {
        (try? AlinkTopicClasses(encoded: connection.userTopics)) ?? AlinkTopicClasses.none
    }

    /// A device's `_ss=1` subscriptions, the same for every device up to its product key and
    /// name: the broker keeps them once (a path of topic-tree nodes per device cost 1.7 KiB).
    /// No Local: a device's own replies on these topics are never echoed back to it.
    var serverSideTemplates: [MQTTTopicSubscription] {
        let base = "/sys/{}/{}"
        return [
            base + "/thing/service/+", base + "/thing/service/property/+", base + "/thing/event/+/post_reply",
            base + "/thing/model/down_raw", base + "/thing/model/up_raw_reply", base + "/rrpc/request/+",
            "/ext/rrpc/+" + base + "/thing/service/+",
        ].map { MQTTTopicSubscription(filter: $0, qos: .atLeastOnce, noLocal: true) }
    }

    func serverSideScope(for principal: MQTTPrincipal) -> [String]? {
        guard let connection = DevicePrincipal(principal), connection.serverSideSubscriptions, connection.registration == nil else { return nil }
        return [connection.device.productKey, connection.device.deviceName]
    }

    func clientConnected(_ principal: MQTTPrincipal, remoteAddress: String) {
        _ = presence.push(PresenceChange(principal: principal, connected: true, reason: nil, remoteAddress: remoteAddress, atMs: Clock.unixMilliseconds()))
    }

    func clientDisconnected(_ principal: MQTTPrincipal, reason: MQTTBrokerEvent.DisconnectReason) {
        _ = presence.push(PresenceChange(principal: principal, connected: false, reason: reason, remoteAddress: "", atMs: Clock.unixMilliseconds()))
    }
}

/// A device connection began or ended.
struct PresenceChange: Sendable {
    var principal: MQTTPrincipal
    var connected: Bool
    var reason: MQTTBrokerEvent.DisconnectReason?
    var remoteAddress: String
    var atMs: Int64
}

/// Who a connected client is, as the authentication hook decided.
public struct MQTTPrincipal: Hashable, Sendable {
    public var clientID: String
    public var username: String?
    /// Whatever the embedder wants to remember (a device's product key and name, a user id…).
    public var attributes: [String: String]

    public init(clientID: String, username: String? = nil, attributes: [String: String] = [:]) {
        self.clientID = clientID
        self.username = username
        self.attributes = attributes
    }
}

/// What a client presents at CONNECT, for authentication.
public struct MQTTConnectRequest: Sendable {
    public var clientID: String
    public var username: String?
    /// Never log this.
    public var password: [UInt8]?
    public var version: MQTTVersion
    public var keepAlive: UInt16
    /// The client's address, `ip:port`.
    public var remoteAddress: String
    /// Whether the connection came through a TLS listener.
    public var isSecure: Bool
}

/// The outcome of authentication.
public enum MQTTAuthentication: Sendable {
    case accepted(MQTTPrincipal)
    /// Refused with a CONNACK reason code (`.badUserNameOrPassword`, `.notAuthorized`, …).
    case refused(MQTTReasonCode)
}

/// The embedder's say over the broker: who may connect, publish and subscribe, and which
/// subscriptions a client gets without asking. Every method has a permissive default.
public protocol MQTTBrokerHooks: Sendable {
    /// Accept (returning who the client is) or refuse with a reason code (CONNACK).
    func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication
    /// Whether `principal` may publish to `topic`. Called for every PUBLISH and for the will.
    func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool
    /// Whether `principal` may subscribe to `filter` (the whole filter, `$share/…` included).
    func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool
    /// Subscriptions applied at connect without a SUBSCRIBE (Alink's `_ss=1` devices).
    func serverSideSubscriptions(for principal: MQTTPrincipal) -> [MQTTTopicSubscription]
}

extension MQTTBrokerHooks {
    public func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        .accepted(MQTTPrincipal(clientID: request.clientID, username: request.username))
    }
    public func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool { true }
    public func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool { true }
    public func serverSideSubscriptions(for principal: MQTTPrincipal) -> [MQTTTopicSubscription] { [] }
}

/// Anyone may connect, publish and subscribe: a development broker.
public struct MQTTAllowAllHooks: MQTTBrokerHooks {
    public init() {}
}

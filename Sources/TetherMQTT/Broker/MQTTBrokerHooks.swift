/// What a client presents at CONNECT, for authentication.
public struct MQTTConnectRequest: Sendable {
    /// The client identifier from CONNECT, as sent: empty when the client wants one assigned.
    public var clientID: String
    /// The user name from CONNECT, if any.
    public var username: String?
    /// Never log this.
    public var password: [UInt8]?
    /// The protocol level the client connects with.
    public var version: MQTTVersion
    /// The keep-alive the client asked for, in seconds; 0 means none.
    public var keepAlive: UInt16
    /// The client's address, `ip:port`.
    public var remoteAddress: String
    /// Whether the connection came through a TLS listener.
    public var isSecure: Bool
}

/// The outcome of authentication.
public enum MQTTAuthentication: Sendable {
    /// Let the client in as this principal (its `clientID` may re-key the session).
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
    /// Whether the broker asks ``authorizeDelivery(_:topic:)`` before each message it queues for
    /// a subscriber (and each retained message it sends). Read once, when the broker is built;
    /// it costs a call per message and subscriber, so it is off unless the hooks need it.
    var checksDeliveries: Bool { get }
    /// Whether `principal` may receive a message on `topic` (mosquitto's read check): a
    /// subscription may be broader than what its client may read.
    func authorizeDelivery(_ principal: MQTTPrincipal, topic: String) -> Bool
    /// Subscriptions applied at connect without a SUBSCRIBE (Alink's `_ss=1` devices). They may
    /// set No Local whatever the protocol version, so that a client's own replies are not
    /// echoed back to it.
    func serverSideSubscriptions(for principal: MQTTPrincipal) -> [MQTTTopicSubscription]
    /// Server-side subscriptions that many clients hold up to a few levels of their own (a
    /// gateway's `/sys/{product}/{device}/…` for every device), kept once for all of them rather
    /// than once per client: filters in which a level `{}` stands for the client's next value
    /// (``serverSideScope(for:)``). Read once, when the broker is built; every template takes
    /// the same number of values. Like ``serverSideSubscriptions(for:)`` they may set No Local.
    /// A client cannot UNSUBSCRIBE them, and they are not stored with a persistent session: it
    /// gets them back when its client connects.
    var serverSideTemplates: [MQTTTopicSubscription] { get }
    /// The values a client's ``serverSideTemplates`` take, in order (a device's product key and
    /// name); nil gives it none. A value must be a topic level without wildcards.
    func serverSideScope(for principal: MQTTPrincipal) -> [String]?
    /// A client completed CONNECT. Called on the connection's event loop, before the broker
    /// reads the client's next packet, and before ``clientDisconnected(_:reason:)`` of the same
    /// connection: return quickly and never block.
    func clientConnected(_ principal: MQTTPrincipal, remoteAddress: String)
    /// A connected client's connection ended. `reason` is `.takenOver` when another connection
    /// holds the session now (the client is still connected). Same rules as
    /// ``clientConnected(_:remoteAddress:)``.
    func clientDisconnected(_ principal: MQTTPrincipal, reason: MQTTBrokerEvent.DisconnectReason)
}

extension MQTTBrokerHooks {
    /// Accepts every client as the client identifier and user name it presented.
    public func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        .accepted(MQTTPrincipal(clientID: request.clientID, username: request.username))
    }
    /// Allows every publication.
    public func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool { true }
    /// Allows every subscription.
    public func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool { true }
    /// No check per delivery.
    public var checksDeliveries: Bool { false }
    /// Allows every delivery.
    public func authorizeDelivery(_ principal: MQTTPrincipal, topic: String) -> Bool { true }
    /// No subscriptions beyond those the client asks for.
    public func serverSideSubscriptions(for principal: MQTTPrincipal) -> [MQTTTopicSubscription] { [] }
    /// No templates.
    public var serverSideTemplates: [MQTTTopicSubscription] { [] }
    /// No scope.
    public func serverSideScope(for principal: MQTTPrincipal) -> [String]? { nil }
    /// Does nothing.
    public func clientConnected(_ principal: MQTTPrincipal, remoteAddress: String) {}
    /// Does nothing.
    public func clientDisconnected(_ principal: MQTTPrincipal, reason: MQTTBrokerEvent.DisconnectReason) {}
}

/// Anyone may connect, publish and subscribe: a development broker.
public struct MQTTAllowAllHooks: MQTTBrokerHooks {
    /// Builds the permissive hooks.
    public init() {}
}

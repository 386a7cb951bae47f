/// How an ``MQTTBroker`` behaves. Every limit has a default.
public struct MQTTBrokerConfiguration: Sendable, Equatable {
    /// Largest packet accepted from a client (bytes, whole packet).
    public var maximumPacketSize: Int
    /// Highest QoS granted; publications above it are refused (v5) or the connection closed (3.1.1).
    public var maximumQoS: MQTTQoS
    /// Whether clients may publish retained messages; when false, v5 CONNACK says Retain
    /// Available 0 and a PUBLISH with RETAIN closes the connection (0x9A).
    public var retainAvailable: Bool
    /// QoS 1 and 2 messages a client may have unacknowledged towards the broker (v5 Receive Maximum).
    public var receiveMaximum: UInt16
    /// QoS 1 and 2 messages the broker sends a client before waiting for acknowledgements.
    public var maximumInflightMessages: Int
    /// Messages kept for a disconnected persistent session, or waiting for the in-flight window;
    /// the oldest are dropped beyond it.
    public var maximumQueuedMessages: Int
    /// Whether QoS 0 messages are queued for disconnected persistent sessions (mosquitto: no).
    public var queueQoS0Messages: Bool
    /// Upper bound on a v5 client's session expiry, seconds.
    public var maximumSessionExpiry: UInt32
    /// Topic aliases a v5 client may define towards the broker.
    public var topicAliasMaximum: UInt16
    /// Topic aliases the broker defines towards a v5 client that accepts them (its CONNECT's
    /// Topic Alias Maximum): the first message on a topic carries the topic and an alias, later
    /// ones the alias only. 0 sends none.
    public var outgoingTopicAliasMaximum: UInt16
    /// The longest keep-alive a client may ask for (seconds); nil: any. A v5 client asking for
    /// more, or for none, is told this one (Server Keep Alive); a 3.1.1 client asking for more is
    /// refused (CONNACK 2, identifier rejected), as mosquitto does, and one asking for none is
    /// disconnected after this long without a packet.
    public var maximumKeepAlive: UInt16?
    /// Whether a v5 client refused a subscription or a publication by the hooks is told why
    /// (0x87 Not authorized) or not (0x80 Unspecified error: the server "does not wish to reveal
    /// the reason", MQTT 5 §3.9.3).
    public var revealsRefusalReason: Bool
    /// A client that sends nothing for keep-alive × this factor is disconnected (MQTT: 1.5).
    public var keepAliveFactor: Double
    /// Time a new connection has to send CONNECT.
    public var connectTimeout: Duration
    /// Whether a client may connect with an empty client identifier (one is then assigned).
    public var allowEmptyClientID: Bool

    /// Builds a configuration from the given limits, used as they are, without validation.
    public init(
        maximumPacketSize: Int = 1 << 20,
        maximumQoS: MQTTQoS = .exactlyOnce,
        retainAvailable: Bool = true,
        receiveMaximum: UInt16 = 1024,
        maximumInflightMessages: Int = 64,
        maximumQueuedMessages: Int = 1000,
        queueQoS0Messages: Bool = false,
        maximumSessionExpiry: UInt32 = .max,
        topicAliasMaximum: UInt16 = 16,
        outgoingTopicAliasMaximum: UInt16 = 0,
        maximumKeepAlive: UInt16? = nil,
        revealsRefusalReason: Bool = true,
        keepAliveFactor: Double = 1.5,
        connectTimeout: Duration = .seconds(10),
        allowEmptyClientID: Bool = true
    ) {
        self.maximumPacketSize = maximumPacketSize
        self.maximumQoS = maximumQoS
        self.retainAvailable = retainAvailable
        self.receiveMaximum = receiveMaximum
        self.maximumInflightMessages = maximumInflightMessages
        self.maximumQueuedMessages = maximumQueuedMessages
        self.queueQoS0Messages = queueQoS0Messages
        self.maximumSessionExpiry = maximumSessionExpiry
        self.topicAliasMaximum = topicAliasMaximum
        self.outgoingTopicAliasMaximum = outgoingTopicAliasMaximum
        self.maximumKeepAlive = maximumKeepAlive
        self.revealsRefusalReason = revealsRefusalReason
        self.keepAliveFactor = keepAliveFactor
        self.connectTimeout = connectTimeout
        self.allowEmptyClientID = allowEmptyClientID
    }
}

public import TetherCore

/// How an ``MQTTClient`` connects and behaves. Every field but the host has a default.
public struct MQTTClientConfiguration: Sendable {
    /// The broker's host name or IP address; by default also the TLS server name and WebSocket `Host`.
    public var host: String
    /// The broker's port: 1883 by default, usually 8883 with TLS.
    public var port: Int
    /// The protocol level to speak; only ``MQTTVersion/v5`` sends properties.
    public var version: MQTTVersion
    /// Empty lets the broker assign one (v5; 3.1.1 brokers accept it only with a clean session).
    public var clientID: String
    /// Clean Session (3.1.1) / Clean Start (5): false resumes the broker's stored session.
    public var cleanStart: Bool
    /// v5: seconds the broker keeps the session after the connection ends.
    public var sessionExpiry: UInt32
    /// Seconds without sending after which the client sends PINGREQ; 0 turns keep-alive off.
    public var keepAlive: UInt16
    /// How long the client waits for PINGRESP before it closes the connection as dead (and
    /// reconnects). Nil, the default, waits the keep-alive, as Paho does: a broker busy for
    /// seconds (a connect storm) is not a dead link, and closing would only add to its load.
    /// Set it shorter to notice a dead link sooner.
    public var pingTimeout: Duration?
    /// The user name sent in CONNECT, unless ``MQTTClientConfiguration/credentials`` gives one.
    public var username: String?
    /// Never logged.
    public var password: [UInt8]?
    /// The message the broker publishes if this client vanishes without DISCONNECT.
    public var will: MQTTWill?
    /// How to reach the broker: plain TCP by default, or TLS or WebSocket.
    public var transport: MQTTTransport
    /// Limit for each step of a connection attempt: the TCP connection, a WebSocket
    /// upgrade, and the wait for CONNACK.
    public var connectTimeout: Duration
    /// How long SUBSCRIBE and UNSUBSCRIBE wait for their acknowledgement.
    public var requestTimeout: Duration
    /// Unacknowledged QoS 1 and 2 publications allowed at once (also bounded by the broker's
    /// v5 Receive Maximum).
    public var maximumInflight: Int
    /// Publications waiting to be sent (while disconnected, or while the in-flight window is
    /// full); `MQTTError.Code.offlineQueueFull` beyond it.
    public var maximumQueuedMessages: Int
    /// Reconnection delays (by default from 0.5 s, doubling up to 30 s, each ±20 %). Nil turns
    /// automatic reconnection off.
    public var reconnect: ReconnectPolicy?
    /// Largest packet accepted from the broker.
    public var maximumPacketSize: Int
    /// Called before every connection attempt; what it returns replaces `clientID`, `username`
    /// and `password` for that attempt (Alink devices sign a fresh timestamp each time).
    public var credentials: (@Sendable () -> MQTTCredentials)?

    /// Builds a configuration; only the host is required, and a random `tether-…` client
    /// identifier is generated when none is given.
    public init(
        host: String,
        port: Int = 1883,
        version: MQTTVersion = .v311,
        clientID: String = "tether-" + String(UInt64.random(in: 0...UInt64.max), radix: 36),
        cleanStart: Bool = true,
        sessionExpiry: UInt32 = 0,
        keepAlive: UInt16 = 60,
        pingTimeout: Duration? = nil,
        username: String? = nil,
        password: [UInt8]? = nil,
        will: MQTTWill? = nil,
        transport: MQTTTransport = .tcp,
        connectTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(10),
        maximumInflight: Int = 20,
        maximumQueuedMessages: Int = 1000,
        reconnect: ReconnectPolicy? = ReconnectPolicy(),
        maximumPacketSize: Int = 1 << 20,
        credentials: (@Sendable () -> MQTTCredentials)? = nil
    ) {
        self.host = host
        self.port = port
        self.version = version
        self.clientID = clientID
        self.cleanStart = cleanStart
        self.sessionExpiry = sessionExpiry
        self.keepAlive = keepAlive
        self.pingTimeout = pingTimeout
        self.username = username
        self.password = password
        self.will = will
        self.transport = transport
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maximumInflight = maximumInflight
        self.maximumQueuedMessages = maximumQueuedMessages
        self.reconnect = reconnect
        self.maximumPacketSize = maximumPacketSize
        self.credentials = credentials
    }

    /// The wait for PINGRESP: ``pingTimeout``, or the keep-alive; at least a second.
    var effectivePingTimeout: Duration {
        max(pingTimeout ?? .seconds(Int(keepAlive)), .seconds(1))
    }

    func reconnectDelay(attempt: Int) -> Duration? {
        reconnect?.delay(attempt: attempt)
    }
}

/// The identity a client presents at CONNECT.
public struct MQTTCredentials: Sendable {
    /// The client identifier for this attempt.
    public var clientID: String
    /// The user name for this attempt, if any.
    public var username: String?
    /// Never logged.
    public var password: [UInt8]?

    /// Builds credentials for one connection attempt.
    public init(clientID: String, username: String? = nil, password: [UInt8]? = nil) {
        self.clientID = clientID
        self.username = username
        self.password = password
    }
}

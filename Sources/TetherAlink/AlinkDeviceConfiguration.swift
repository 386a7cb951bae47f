public import TetherCore
public import TetherMQTT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How an ``AlinkDeviceClient`` reaches its cloud. Every field but the host, the device and its
/// secret has a default.
public struct AlinkDeviceConfiguration: Sendable {
    /// Host name or IP address of the MQTT broker.
    public var host: String
    /// Broker port (1883 by default: plain MQTT).
    public var port: Int
    /// The device that signs in and whose `/sys/{pk}/{dn}/…` topics are used.
    public var device: AlinkDeviceIdentity
    /// The per-device secret. Never logged.
    public var deviceSecret: String
    /// 30 to 1200 seconds, as the Alink platform requires.
    public var keepAlive: UInt16
    /// TCP, TLS or WebSocket; a secure transport signs in with `securemode=2`, others with 3.
    public var transport: MQTTTransport
    /// The HMAC the CONNECT password is made with.
    public var signMethod: AlinkSignMethod
    /// How long a post waits for its `_reply`.
    public var replyTimeout: Duration
    /// Reconnection after a lost connection; nil turns it off.
    public var reconnect: ReconnectPolicy?
    /// How long a connection attempt (TCP, CONNECT, CONNACK) may take before it is given up.
    public var connectTimeout: Duration = .seconds(10)
    /// How long to wait for a PINGRESP before the connection counts as lost; nil waits the
    /// keep-alive, as Paho does (``MQTTClientConfiguration/pingTimeout``).
    public var pingTimeout: Duration?
    /// Unix time in seconds, signed into every CONNECT.
    public var now: @Sendable () -> Int64
    /// Subscribe to the device's downstream topics instead of relying on the cloud's
    /// server-side subscriptions (`_ss=1`): for stock brokers such as mosquitto.
    public var subscribesExplicitly: Bool
    /// A whitelist-free device's token: when set, the client connects with it
    /// (`securemode=-2`) instead of signing with ``deviceSecret``.
    public var token: AlinkDeviceToken?

    /// A configuration with Alink's usual defaults; the keep-alive is checked when the client
    /// connects, not here.
    public init(
        host: String,
        port: Int = 1883,
        device: AlinkDeviceIdentity,
        deviceSecret: String,
        keepAlive: UInt16 = 60,
        transport: MQTTTransport = .tcp,
        signMethod: AlinkSignMethod = .hmacsha1,
        replyTimeout: Duration = .seconds(10),
        reconnect: ReconnectPolicy? = ReconnectPolicy(),
        now: @escaping @Sendable () -> Int64 = { AlinkClock.now() },
        subscribesExplicitly: Bool = false
    ) {
        self.host = host
        self.port = port
        self.device = device
        self.deviceSecret = deviceSecret
        self.keepAlive = keepAlive
        self.transport = transport
        self.signMethod = signMethod
        self.replyTimeout = replyTimeout
        self.reconnect = reconnect
        self.now = now
        self.subscribesExplicitly = subscribesExplicitly
    }

    /// A whitelist-free device that connects with the token its registration returned
    /// (``AlinkDynamicRegistration``), over TLS unless the cloud allows otherwise.
    public init(
        host: String, port: Int = 8883, device: AlinkDeviceIdentity, token: AlinkDeviceToken, keepAlive: UInt16 = 60, transport: MQTTTransport = .tcp,
        replyTimeout: Duration = .seconds(10), reconnect: ReconnectPolicy? = ReconnectPolicy()
    ) {
        self.init(
            host: host, port: port, device: device, deviceSecret: "", keepAlive: keepAlive, transport: transport, replyTimeout: replyTimeout,
            reconnect: reconnect)
        self.token = token
    }

    /// The MQTT client configuration: a fresh signature with the current time on every
    /// connection attempt, `securemode=2` over TLS and 3 otherwise; or the token.
    public var mqtt: MQTTClientConfiguration {
        if let token {
            let credentials = AlinkCredentials.token(device, clientIDPrefix: token.clientIDPrefix, token: token.token)
            var configuration = MQTTClientConfiguration(
                host: host, port: port, version: .v311, cleanStart: true, keepAlive: keepAlive, transport: transport, reconnect: reconnect,
                credentials: { MQTTCredentials(clientID: credentials.clientID, username: credentials.username, password: Array(credentials.password.utf8)) }
            )
            configuration.connectTimeout = connectTimeout
            configuration.pingTimeout = pingTimeout
            return configuration
        }
        var configuration = MQTTClientConfiguration.alink(
            host: host, port: port, device: device, secret: deviceSecret, keepAlive: keepAlive, cleanStart: true,
            transport: transport, signMethod: signMethod, reconnect: reconnect, now: now
        )
        configuration.connectTimeout = connectTimeout
        configuration.pingTimeout = pingTimeout
        return configuration
    }
}

/// Wall-clock Unix seconds.
public enum AlinkClock {
    /// The current time in whole seconds since 1970 (the default clock of a configuration).
    public static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970)
    }
}

extension MQTTClientConfiguration {
    /// A device's Alink connection: MQTT 3.1.1, CONNECT signed with the device secret and a
    /// fresh timestamp on every connection, secure mode 2 over TLS and 3 otherwise.
    static func alink(
        host: String, port: Int, device: AlinkDeviceIdentity, secret: String, keepAlive: UInt16, cleanStart: Bool,
        transport: MQTTTransport, signMethod: AlinkSignMethod, reconnect: ReconnectPolicy?, now: @escaping @Sendable () -> Int64
    ) -> MQTTClientConfiguration {
        let secureMode = transport.isSecure ? 2 : 3
        return MQTTClientConfiguration(
            host: host, port: port, version: .v311, cleanStart: cleanStart, keepAlive: keepAlive, transport: transport, reconnect: reconnect,
            credentials: {
                let credentials = AlinkCredentials.device(device, secret: secret, timestamp: now(), secureMode: secureMode, signMethod: signMethod)
                return MQTTCredentials(clientID: credentials.clientID, username: credentials.username, password: Array(credentials.password.utf8))
            }
        )
    }
}

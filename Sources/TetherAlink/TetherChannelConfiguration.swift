public import TetherCore
public import TetherMQTT

/// Where and as whom a ``TetherChannel`` connects: the phone's own device triple
/// (ProductKey, DeviceName, DeviceSecret) and a broker speaking Alink over MQTT — a Tether
/// cloud's device gateway, or Aliyun's IoT platform (``aliyun(region:device:deviceSecret:)``).
public struct TetherChannelConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var device: AlinkDeviceIdentity
    /// Never logged.
    public var deviceSecret: String
    /// Keep the session while disconnected and receive what was published to its
    /// subscriptions meanwhile (the seed's `receiveOfflineMsg`: an MQTT session that is not clean).
    public var receiveOfflineMessages: Bool
    /// Seconds; Alink allows 30 to 1200.
    public var keepAlive: UInt16
    public var transport: MQTTTransport
    public var signMethod: AlinkSignMethod
    /// How long ``TetherChannel/invoke(topic:params:options:)`` waits for `topic_reply`.
    public var replyTimeout: Duration
    /// How the channel connects again after losing the broker; nil: it does not.
    public var reconnect: ReconnectPolicy?
    /// Seconds since 1970, for the CONNECT signature.
    public var now: @Sendable () -> Int64

    public init(
        host: String,
        port: Int = 1883,
        device: AlinkDeviceIdentity,
        deviceSecret: String,
        receiveOfflineMessages: Bool = false,
        keepAlive: UInt16 = 60,
        transport: MQTTTransport = .tcp,
        signMethod: AlinkSignMethod = .hmacsha256,
        replyTimeout: Duration = .seconds(10),
        reconnect: ReconnectPolicy? = ReconnectPolicy(),
        now: @escaping @Sendable () -> Int64 = { AlinkClock.now() }
    ) {
        self.host = host
        self.port = port
        self.device = device
        self.deviceSecret = deviceSecret
        self.receiveOfflineMessages = receiveOfflineMessages
        self.keepAlive = keepAlive
        self.transport = transport
        self.signMethod = signMethod
        self.replyTimeout = replyTimeout
        self.reconnect = reconnect
        self.now = now
    }

    /// Aliyun's regional endpoint, `{productKey}.iot-as-mqtt.{region}.aliyuncs.com:1883`
    /// (the seed's default when no server is set is the Shanghai region).
    public static func aliyun(region: String = "cn-shanghai", device: AlinkDeviceIdentity, deviceSecret: String) -> Self {
        Self(host: "\(device.productKey).iot-as-mqtt.\(region).aliyuncs.com", port: 1883, device: device, deviceSecret: deviceSecret)
    }

    /// The MQTT connection: 3.1.1, signed per Alink (a fresh timestamp on every connection).
    public var mqtt: MQTTClientConfiguration {
        .alink(
            host: host, port: port, device: device, secret: deviceSecret, keepAlive: keepAlive, cleanStart: !receiveOfflineMessages,
            transport: transport, signMethod: signMethod, reconnect: reconnect, now: now
        )
    }
}

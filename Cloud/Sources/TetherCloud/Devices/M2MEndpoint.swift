/// Where devices and apps reach the cloud's real-time side, as every device object tells
/// them (`host`, `port`, `port_s`, `ws_port`, `wss_port`).
public struct M2MEndpoint: Sendable, Equatable {
    public var host: String
    public var mqttPort: Int
    public var mqttTLSPort: Int
    public var webSocketPort: Int
    public var secureWebSocketPort: Int

    public init(host: String = "127.0.0.1", mqttPort: Int = 1883, mqttTLSPort: Int = 8883, webSocketPort: Int = 8080, secureWebSocketPort: Int = 8880) {
        self.host = host
        self.mqttPort = mqttPort
        self.mqttTLSPort = mqttTLSPort
        self.webSocketPort = webSocketPort
        self.secureWebSocketPort = secureWebSocketPort
    }
}

public import NIOSSL

/// How the device gateway (the embedded MQTT broker devices connect to) runs.
public struct GatewayConfiguration: Sendable {
    /// Plain MQTT port for devices (1883); 0 lets the system choose; nil turns plain MQTT off.
    public var mqttPort: Int? = 1883
    /// MQTT over TLS (8883 by convention), with `tls`; nil turns it off.
    public var tlsPort: Int?
    public var tls: TLSConfiguration?
    /// How far a device's signed timestamp may be from the server's clock, in seconds. A
    /// CONNECT signed longer ago than this is refused as a replay.
    public var timestampSkew: Int64 = 900
    /// Keep-alive intervals devices may ask for, in seconds (Alink: 30 to 1200).
    public var keepAliveRange: ClosedRange<UInt16> = 30...1200
    /// Refuse CONNECTs whose client id carries no timestamp (their signature never expires).
    public var requireTimestamp = true
    /// Let devices register with their product secret (`authType=register`) over plain TCP;
    /// the Alink platform insists on TLS because the answer carries the device secret.
    public var allowRegistrationWithoutTLS = false
    /// How long a device has from opening its connection to being admitted (CONNECT, and its
    /// authentication against the database); past it the connection is closed.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a command may wait for the device's answer before it is `expired`.
    public var answerTimeoutSeconds: Int64 = 30
    /// The longest a caller may ask a command for an offline device to be queued.
    public var maximumQueueSeconds: Int64 = 7 * 24 * 3600
    /// This node's name in the database (which devices it holds). Unique per running node.
    public var nodeID: String = "node-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    /// A node that has not written its heartbeat for this long is gone: its devices are offline.
    public var nodeTimeoutSeconds: Int64 = 15

    public init() {}
}

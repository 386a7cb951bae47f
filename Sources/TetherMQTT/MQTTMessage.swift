public import NIOCore

/// An application message: what a PUBLISH carries, independent of packet identifiers and flags.
public struct MQTTMessage: Hashable, Sendable {
    public var topic: String
    public var payload: ByteBuffer
    public var qos: MQTTQoS
    public var retain: Bool
    /// v5 properties that travel with the message (content type, response topic, user properties…).
    public var properties: MQTTProperties

    public init(topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    public init(topic: String, payload: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) {
        self.init(topic: topic, payload: ByteBuffer(string: payload), qos: qos, retain: retain, properties: properties)
    }

    /// The payload as UTF-8 text (invalid bytes replaced).
    public var payloadString: String { String(buffer: payload) }
}

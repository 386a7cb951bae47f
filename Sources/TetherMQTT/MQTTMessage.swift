public import NIOCore

/// An application message: what a PUBLISH carries, independent of packet identifiers and flags.
public struct MQTTMessage: Hashable, Sendable {
    /// The topic name; it must not contain wildcards (``MQTTClient`` checks before publishing).
    public var topic: String
    /// The message bytes, opaque to MQTT.
    public var payload: ByteBuffer
    /// The QoS requested when publishing, or the QoS it was delivered with when received.
    public var qos: MQTTQoS
    /// Publishing: keep it as the topic's retained message (an empty payload clears it).
    /// Received: it is a retained message.
    public var retain: Bool
    /// v5 properties that travel with the message (content type, response topic, user properties…).
    public var properties: MQTTProperties

    /// Builds a message from bytes; the topic is not validated here.
    public init(topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    /// Builds a message whose payload is the UTF-8 encoding of `payload`.
    public init(topic: String, payload: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) {
        self.init(topic: topic, payload: ByteBuffer(string: payload), qos: qos, retain: retain, properties: properties)
    }

    /// The payload as UTF-8 text (invalid bytes replaced).
    public var payloadString: String { String(buffer: payload) }
}

public import TetherCore

/// `POST /app/devices/{did}/publish` (Tether extension, Aliyun's `Pub`): bytes to one of the
/// device's custom topics (`/{pk}/{dn}/user/…`) of a class the device may subscribe to. The
/// device gets them if it is connected and subscribed, as on Aliyun.
public struct DevicePublishBody: Sendable, Hashable {
    /// The largest payload, in bytes.
    public static let maximumPayload = 65_536

    /// The whole MQTT topic, `/{pk}/{dn}/user/…`.
    public var topic: String
    /// The bytes (`payload_base64` in JSON).
    public var payload: [UInt8]
    /// 0 or 1 (default 0).
    public var qos: Int

    public init(topic: String, payload: [UInt8], qos: Int = 0) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let payload = try reader.base64("payload_base64", maximum: Self.maximumPayload)
        let qos = try reader.optionalInt("qos") ?? 0
        guard qos == 0 || qos == 1 else { throw CloudBodyError(field: "qos", "is 0 or 1") }
        self.init(topic: try reader.text("topic"), payload: payload, qos: Int(qos))
    }

    public var json: JSONValue { ["topic": .string(topic), "payload_base64": .string(payload.tetherBase64), "qos": .int(Int64(qos))] }
}

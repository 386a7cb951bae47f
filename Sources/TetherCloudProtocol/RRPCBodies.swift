public import TetherCore

/// `POST /app/devices/{did}/rrpc` (Tether extension): a synchronous call to a connected device
/// over the gateway (Alink RRPC, `shared/reference/alink-mqtt.md` §5), shaped like Aliyun's
/// `RRpc` API: opaque bytes down, the device's bytes back, or a timeout.
///
/// Without `topic` the device gets `/sys/{pk}/{dn}/rrpc/request/{messageId}` and answers on
/// `…/rrpc/response/{messageId}`; with a topic of its own (`/{pk}/{dn}/user/…`, or
/// `/sys/{pk}/{dn}/thing/service/{identifier}`) it gets `/ext/rrpc/{messageId}{topic}` and
/// answers on the same topic.
public struct RRPCCallBody: Sendable, Hashable {
    /// What the cloud waits when the call names no timeout.
    public static let defaultTimeoutMs: Int64 = 5_000
    /// The timeouts a call may ask for, in milliseconds.
    public static let timeoutRangeMs: ClosedRange<Int64> = 100...30_000
    /// The largest payload either way, in bytes.
    public static let maximumPayload = 65_536

    /// The bytes the device gets (`payload_base64` in JSON).
    public var payload: [UInt8]
    /// The custom topic, for custom RRPC; nil for system RRPC.
    public var topic: String?
    /// How long the cloud waits for the device's answer (`timeout_ms`).
    public var timeoutMs: Int64?

    public init(payload: [UInt8], topic: String? = nil, timeoutMs: Int64? = nil) {
        self.payload = payload
        self.topic = topic
        self.timeoutMs = timeoutMs
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let payload = try reader.base64("payload_base64", maximum: Self.maximumPayload)
        self.init(payload: payload, topic: try reader.optionalString("topic"), timeoutMs: try reader.lenientInt("timeout_ms"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["payload_base64": .string(payload.tetherBase64)]
        if let topic { object["topic"] = .string(topic) }
        if let timeoutMs { object["timeout_ms"] = .int(timeoutMs) }
        return .object(object)
    }
}

/// The device's answer to an RRPC call.
public struct RRPCAnswerBody: Sendable, Hashable {
    /// The `{messageId}` of the request and response topics.
    public var messageID: String
    /// The bytes the device answered (`payload_base64` in JSON).
    public var payload: [UInt8]

    public init(messageID: String, payload: [UInt8]) {
        self.messageID = messageID
        self.payload = payload
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(messageID: try reader.text("message_id"), payload: try reader.base64("payload_base64"))
    }

    public var json: JSONValue { ["message_id": .string(messageID), "payload_base64": .string(payload.tetherBase64)] }
}

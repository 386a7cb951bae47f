public import TetherCore

/// The request envelope of the IoT channel (Aliyun's `IMLChannelCore` `invokeWithTopic` and
/// `publish`): `id`, `system {version, time}`, `request`, `params`, and the caller's extra fields
/// beside `params` (`{"extraParam": {"method": "thing.topo.add"}}` puts `method` there).
public struct ChannelRequest: Hashable, Sendable {
    /// Matches the reply (`topic_reply`) to the request.
    public var id: String
    /// When the request was made, in milliseconds since 1970 (`system.time`).
    public var timeMs: Int64
    /// The business parameters.
    public var params: JSONValue
    /// Fields put beside `params`; they cannot replace the envelope's own.
    public var extraParams: JSONObject

    /// The envelope's own top-level fields, which `extraParams` may not name.
    public static let envelopeFields: Set<String> = ["id", "system", "request", "params"]

    /// Throws `invalidArgument` when an extra field would replace one of the envelope's.
    public init(id: String, timeMs: Int64, params: JSONValue, extraParams: JSONObject = [:]) throws(TetherError) {
        if let clash = extraParams.keys.sorted().first(where: Self.envelopeFields.contains) {
            throw TetherError(.invalidArgument, "the extra parameter \"\(clash)\" would replace the request envelope's own")
        }
        self.id = id
        self.timeMs = timeMs
        self.params = params
        self.extraParams = extraParams
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "id": .string(id), "system": ["version": "1.0", "time": .string(String(timeMs))], "request": .object([:]), "params": params,
        ]
        for key in extraParams.keys { object[key] = extraParams[key] }
        return .object(object)
    }

    public var bytes: [UInt8] { json.serializedBytes() }

    /// Reads an envelope (a responder's side, and tests); the same limits as every Alink payload.
    public init(parsing bytes: some Collection<UInt8>, maximumSize: Int = AlinkLimits.maximumPayloadSize) throws(TetherError) {
        var object = try AlinkLimits.object(bytes, maximumSize: maximumSize)
        id = try AlinkLimits.id(object)
        guard let system = object["system"]?.objectValue else {
            throw TetherError(.malformedPayload, "a channel request needs a \"system\" object")
        }
        switch system["time"] {
        case .string(let text)?:
            guard let ms = Int64(text) else { throw TetherError(.malformedPayload, "system.time is milliseconds since 1970") }
            timeMs = ms
        case .int(let ms)?: timeMs = ms
        default: throw TetherError(.malformedPayload, "a channel request needs system.time")
        }
        params = object["params"] ?? .object([:])
        for field in Self.envelopeFields { object[field] = nil }
        extraParams = object
    }
}

/// How the channel is to the broker (the seed's connect listener).
public enum ChannelState: Hashable, Sendable {
    case connecting
    case connected
    /// The connection ended: why, when known; the channel connects again by its reconnect policy.
    case disconnected(reason: String?)
}

/// A message the cloud sent down on a topic the channel is subscribed to.
public struct ChannelMessage: Hashable, Sendable {
    public var topic: String
    /// The payload as received: Alink-wrapped JSON or raw bytes.
    public var payload: [UInt8]

    public init(topic: String, payload: [UInt8]) {
        self.topic = topic
        self.payload = payload
    }

    /// The payload as JSON, when it is (within the Alink payload limit).
    public var json: JSONValue? {
        guard payload.count <= AlinkLimits.maximumPayloadSize else { return nil }
        return try? JSONValue.parse(payload)
    }
}

/// Options of ``TetherChannel/invoke(topic:params:options:)``.
public struct ChannelInvokeOptions: Sendable {
    /// Fields put beside `params` in the envelope (the seed's `extraParam`).
    public var extraParams: JSONObject
    /// How long to wait for the reply; nil: the channel's ``TetherChannelConfiguration/replyTimeout``.
    public var timeout: Duration?

    public init(extraParams: JSONObject = [:], timeout: Duration? = nil) {
        self.extraParams = extraParams
        self.timeout = timeout
    }
}

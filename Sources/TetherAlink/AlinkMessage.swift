public import TetherCore

/// A request in the Alink envelope: `{"id", "version", "params", "method"}`. Devices post with
/// it, and the cloud sets properties and calls services with it.
public struct AlinkRequest: Hashable, Sendable {
    /// A decimal string in every message Tether sends; numbers are read as their decimal text.
    public var id: String
    /// The Alink protocol version: `1.0` unless the sender wrote another.
    public var version: String
    /// What is asked, such as `thing.event.property.post` or `thing.service.{identifier}`; nil when
    /// the message has none.
    public var method: String?
    /// The request's arguments: property values, an event's `value`, a service's inputs.
    public var params: JSONValue

    /// A request made of these fields as given.
    public init(id: String, method: String?, params: JSONValue, version: String = "1.0") {
        self.id = id
        self.version = version
        self.method = method
        self.params = params
    }

    /// Reads a request. Throws `malformedPayload` for anything that is not a JSON object with
    /// an `id`, or that is larger than `maximumSize` bytes.
    public init(parsing bytes: some Collection<UInt8>, maximumSize: Int = AlinkLimits.maximumPayloadSize) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: maximumSize)
        self.id = try AlinkLimits.id(object)
        self.version = object["version"]?.stringValue ?? "1.0"
        self.method = object["method"]?.stringValue
        self.params = object["params"] ?? .object([:])
    }

    /// The envelope as a JSON object (`method` left out when nil).
    public var json: JSONValue {
        var object: JSONObject = ["id": .string(id), "version": .string(version), "params": params]
        if let method { object["method"] = .string(method) }
        return .object(object)
    }

    /// The envelope serialized as UTF-8 JSON, as it is published.
    public var bytes: [UInt8] { json.serializedBytes() }

    /// The reply to this request.
    public func reply(code: Int = AlinkReply.success, data: JSONValue = .object([:]), message: String = "success") -> AlinkReply {
        AlinkReply(id: id, code: code, data: data, message: message, method: method, version: version)
    }
}

/// A reply in the Alink envelope: `{"id", "code", "data", "message"}` (plus `method` and
/// `version` when answering a request that had them). `message` is always written: the Python
/// device SDK drops replies without it.
public struct AlinkReply: Hashable, Sendable {
    /// The `code` of a successful reply.
    public static let success = 200

    public var id: String
    /// The outcome: ``success`` (200) or an error code.
    public var code: Int
    /// The result: property values read, a service's outputs or what was refused; `{}` when none.
    public var data: JSONValue
    /// A human-readable outcome: `success` by default, empty when a parsed reply had none.
    public var message: String
    /// The answered request's `method`, echoed; nil to leave it out.
    public var method: String?
    /// The answered request's `version`, echoed; nil to leave it out.
    public var version: String?

    /// A reply made of these fields as given; ``AlinkRequest/reply(code:data:message:)`` fills in the
    /// request's `id`, `method` and `version`.
    public init(
        id: String, code: Int = AlinkReply.success, data: JSONValue = .object([:]), message: String = "success", method: String? = nil, version: String? = nil
    ) {
        self.id = id
        self.code = code
        self.data = data
        self.message = message
        self.method = method
        self.version = version
    }

    /// Whether `code` is ``success``.
    public var isSuccess: Bool { code == Self.success }

    /// Reads a reply. Throws `malformedPayload` for anything that is not a JSON object with an `id`
    /// and an integer `code`, or that is larger than `maximumSize` bytes; no `message` reads as empty.
    public init(parsing bytes: some Collection<UInt8>, maximumSize: Int = AlinkLimits.maximumPayloadSize) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: maximumSize)
        self.id = try AlinkLimits.id(object)
        guard let code = object["code"]?.numberValue, code.isFinite, code == code.rounded(), abs(code) < 1e9 else {
            throw TetherError(.malformedPayload, "an Alink reply needs an integer \"code\"")
        }
        self.code = Int(code)
        self.data = object["data"] ?? .object([:])
        self.message = object["message"]?.stringValue ?? ""
        self.method = object["method"]?.stringValue
        self.version = object["version"]?.stringValue
    }

    /// The envelope as a JSON object: `message` always, `method` and `version` when set.
    public var json: JSONValue {
        var object: JSONObject = ["id": .string(id), "code": .int(Int64(code)), "data": data, "message": .string(message)]
        if let method { object["method"] = .string(method) }
        if let version { object["version"] = .string(version) }
        return .object(object)
    }

    /// The envelope serialized as UTF-8 JSON, as it is published.
    public var bytes: [UInt8] { json.serializedBytes() }
}

/// Limits on what Tether reads from Alink payloads.
public enum AlinkLimits {
    /// The Aliyun platform's limit on a message payload.
    public static let maximumPayloadSize = 256 * 1024
    /// Longest accepted request id.
    public static let maximumIDLength = 64

    /// Alink's keep-alive range, 30 to 1200 seconds; `invalidArgument` outside it.
    static func checkKeepAlive(_ seconds: UInt16) throws(TetherError) {
        guard (30...1200).contains(seconds) else {
            throw TetherError(.invalidArgument, "an Alink keep-alive is 30 to 1200 seconds (got \(seconds))")
        }
    }

    static func object(_ bytes: some Collection<UInt8>, maximumSize: Int) throws(TetherError) -> JSONObject {
        guard bytes.count <= maximumSize else {
            throw TetherError(.malformedPayload, "an Alink payload is at most \(maximumSize) bytes (got \(bytes.count))")
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw TetherError(.malformedPayload, "an Alink payload must be JSON: \(error.message)")
        }
        guard let object = value.objectValue else {
            throw TetherError(.malformedPayload, "an Alink payload must be a JSON object")
        }
        return object
    }

    static func id(_ object: JSONObject) throws(TetherError) -> String {
        let id: String
        switch object["id"] {
        case .string(let text): id = text
        case .int(let number): id = String(number)
        default: throw TetherError(.malformedPayload, "an Alink message needs an \"id\" (a decimal string)")
        }
        guard !id.isEmpty, id.utf8.count <= maximumIDLength else {
            throw TetherError(.malformedPayload, "an Alink message id is 1 to \(maximumIDLength) characters")
        }
        return id
    }
}

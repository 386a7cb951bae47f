public import TetherCore

/// What a device sends on `/shadow/update/{pk}/{dn}`:
/// `{"method": "get"}`, `{"method": "update", "state": {"reported": {…}, "desired": …}, "version": n}`
/// or `{"method": "delete", "state": {"reported": {"key": "null"} | "null"}, "version": n}`.
public enum ShadowRequest: Hashable, Sendable {
    /// The whole shadow, answered on `/shadow/get/{pk}/{dn}`.
    case get
    /// Keys set (or removed with `null`), sections emptied with `"null"`.
    case update(ShadowUpdate)
    /// The keys named removed, whatever value they are given; a section given as `"null"` emptied.
    case delete(ShadowUpdate)

    /// Reads a request; the refusal carries the code the device is answered with.
    public init(parsing bytes: some Collection<UInt8>, maximumSize: Int = DeviceShadow.maximumDocumentSize * 2) throws(ShadowRefusal) {
        guard bytes.count <= maximumSize else { throw ShadowRefusal(.malformed, "a shadow message is at most \(maximumSize) bytes") }
        guard let value = try? JSONValue.parse(bytes), let object = value.objectValue else {
            throw ShadowRefusal(.malformed, "a shadow message is a JSON object")
        }
        guard case .string(let method)? = object["method"] else { throw ShadowRefusal(.missingMethod, "the message has no method") }
        switch method {
        case "get":
            self = .get
            return
        case "update", "delete":
            break
        default:
            throw ShadowRefusal(.invalidMethod, "method is get, update or delete")
        }
        guard case .object(let state)? = object["state"] else { throw ShadowRefusal(.missingState, "an \(method) needs a state object") }
        guard case .int(let version)? = object["version"] else { throw ShadowRefusal(.versionNotNumber, "version must be an integer") }
        let deleting = method == "delete"
        let update = ShadowUpdate(
            reported: try Self.change(state["reported"], name: "reported", deleting: deleting),
            desired: try Self.change(state["desired"], name: "desired", deleting: deleting), version: version)
        guard update.reported != .unchanged || update.desired != .unchanged else {
            throw ShadowRefusal(.missingReported, "the state names neither reported nor desired")
        }
        for change in [update.reported, update.desired] {
            if case .merged(let values) = change, values.isEmpty { throw ShadowRefusal(.emptyReported, "a section names no attribute") }
        }
        self = deleting ? .delete(update) : .update(update)
    }

    private static func change(_ value: JSONValue?, name: String, deleting: Bool) throws(ShadowRefusal) -> ShadowUpdate.Change {
        switch value {
        case nil: return .unchanged
        case .null?, .string("null")?: return .cleared
        case .object(let values)?:
            guard values.count <= DeviceShadow.maximumAttributes else {
                throw ShadowRefusal(.tooManyAttributes, "a shadow section holds at most \(DeviceShadow.maximumAttributes) attributes")
            }
            guard deleting else { return .merged(values) }
            var removals = JSONObject()
            for key in values.keys { removals[key] = .null }
            return .merged(removals)
        default:
            throw ShadowRefusal(.malformed, "\(name) is an object or \"null\"")
        }
    }

    /// The message as the device publishes it.
    public var json: JSONValue {
        func section(_ change: ShadowUpdate.Change) -> JSONValue? {
            switch change {
            case .unchanged: return nil
            case .cleared: return .string("null")
            case .merged(let values): return .object(values)
            }
        }
        switch self {
        case .get:
            return ["method": "get"]
        case .update(let update), .delete(let update):
            var state = JSONObject()
            if let reported = section(update.reported) { state["reported"] = reported }
            if let desired = section(update.desired) { state["desired"] = desired }
            let method: JSONValue = if case .delete = self { "delete" } else { "update" }
            return ["method": method, "state": .object(state), "version": .int(update.version)]
        }
    }

    public var bytes: [UInt8] { json.serializedBytes() }
}

/// What the cloud sends on `/shadow/get/{pk}/{dn}`: the answer to a device's request
/// (`"method": "reply"`) or, when an app changed what it desires, the shadow pushed to the device
/// (`"method": "control"`).
public enum ShadowReply: Hashable, Sendable {
    /// An update or delete was applied; the shadow is now at `version`.
    case accepted(version: Int64)
    /// The answer to a `get`.
    case document(DeviceShadow)
    /// The request was refused.
    case refused(ShadowRefusal)
    /// Pushed: the shadow after an app changed what it desires.
    case control(DeviceShadow)

    /// The message, stamped `now` (Unix seconds), as Aliyun writes it.
    public func json(atSeconds now: Int64) -> JSONValue {
        switch self {
        case .accepted(let version):
            return ["method": "reply", "payload": ["status": "success", "version": .int(version)], "timestamp": .int(now)]
        case .document(let shadow), .control(let shadow):
            let method: JSONValue = if case .control = self { "control" } else { "reply" }
            return [
                "method": method, "payload": ["status": "success", "state": shadow.stateJSON, "metadata": shadow.metadataJSON],
                "version": .int(shadow.version), "timestamp": .int(now),
            ]
        case .refused(let refusal):
            return [
                "method": "reply",
                "payload": ["status": "error", "content": ["errorcode": .string(String(refusal.code.rawValue)), "errormessage": .string(refusal.message)]],
                "timestamp": .int(now),
            ]
        }
    }

    public func bytes(atSeconds now: Int64) -> [UInt8] { json(atSeconds: now).serializedBytes() }

    /// Reads a message of the cloud's (the device's side); throws `malformedPayload` for anything
    /// that is not one.
    public init(parsing bytes: some Collection<UInt8>, maximumSize: Int = AlinkLimits.maximumPayloadSize) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: maximumSize)
        guard case .string(let method)? = object["method"], method == "reply" || method == "control", case .object(let payload)? = object["payload"] else {
            throw TetherError(.malformedPayload, "a shadow reply has method reply or control and a payload object")
        }
        switch payload["status"] {
        case .string("success")?:
            break
        case .string("error")?:
            let content = payload["content"]
            guard let text = content?["errorcode"]?.stringValue, let number = Int(text), let code = ShadowRefusal.Code(rawValue: number) else {
                throw TetherError(.malformedPayload, "a shadow error names one of Aliyun's error codes")
            }
            self = .refused(ShadowRefusal(code, content?["errormessage"]?.stringValue ?? ""))
            return
        default:
            throw TetherError(.malformedPayload, "a shadow reply's status is success or error")
        }
        guard payload["state"] != nil || method == "control" else {
            guard case .int(let version)? = payload["version"] ?? object["version"] else {
                throw TetherError(.malformedPayload, "an accepted shadow update names its version")
            }
            self = .accepted(version: version)
            return
        }
        guard case .int(let version)? = object["version"] ?? payload["version"] else {
            throw TetherError(.malformedPayload, "a shadow document names its version")
        }
        var timestamp: Int64 = 0
        if case .int(let seconds)? = object["timestamp"] { timestamp = seconds }
        let document: JSONValue = [
            "state": payload["state"] ?? .object([:]), "metadata": payload["metadata"] ?? .object([:]), "version": .int(version), "timestamp": .int(timestamp),
        ]
        guard let shadow = DeviceShadow(json: document) else { throw TetherError(.malformedPayload, "a shadow document is not readable") }
        self = method == "control" ? .control(shadow) : .document(shadow)
    }
}

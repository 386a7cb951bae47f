public import TetherCore

/// A device's shadow as the REST API answers it (Tether extension, shaped like the
/// `ShadowMessage` of Aliyun's `GetDeviceShadow`): `{"did", "state": {"reported", "desired"},
/// "metadata", "version", "timestamp"}`. Version 0 and an empty state: the device never had one.
public struct DeviceShadowBody: Sendable, Hashable {
    public var did: String
    public var shadow: DeviceShadow

    public init(did: String, shadow: DeviceShadow) {
        self.did = did
        self.shadow = shadow
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let shadow = DeviceShadow(json: json) else {
            throw CloudBodyError(field: "the body", "must hold a shadow's state, metadata, version and timestamp")
        }
        self.init(did: try reader.text("did"), shadow: shadow)
    }

    public var json: JSONValue {
        var object = shadow.json.objectValue ?? [:]
        object["did"] = .string(did)
        return .object(object)
    }
}

/// `PUT /app/devices/{did}/shadow` (Tether extension, Aliyun's `UpdateDeviceShadow` for the
/// desired section): `{"desired": {key: value | null} | "null", "version": n}`. `version` must
/// be greater than the shadow's; a key set to null is removed; `"null"` empties the section.
public struct ShadowDesiredBody: Sendable, Hashable {
    public var desired: ShadowUpdate.Change
    public var version: Int64

    public init(desired: ShadowUpdate.Change, version: Int64) {
        self.desired = desired
        self.version = version
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        switch reader.object["desired"] {
        case .object(let values)?:
            guard !values.isEmpty else { throw CloudBodyError(field: "desired", "names no attribute (\"null\" empties the section)") }
            guard values.count <= DeviceShadow.maximumAttributes else {
                throw CloudBodyError(field: "desired", "holds at most \(DeviceShadow.maximumAttributes) attributes")
            }
            desired = .merged(values)
        case .null?, .string("null")?:
            desired = .cleared
        case nil:
            throw CloudBodyError(field: "desired", "is required")
        default:
            throw CloudBodyError(field: "desired", "must be an object or \"null\"")
        }
        version = try reader.int("version")
    }

    public var json: JSONValue {
        let section: JSONValue =
            switch desired {
            case .merged(let values): .object(values)
            case .cleared, .unchanged: .string("null")
            }
        return ["desired": section, "version": .int(version)]
    }
}

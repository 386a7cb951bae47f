/// What an Alink topic of one device means (`shared/reference/alink-mqtt.md` §3).
public enum AlinkTopic: Hashable, Sendable {
    /// `thing/event/property/post` (up) and its `_reply` (down).
    case propertyPost, propertyPostReply
    /// `thing/service/property/set` (down) and its `_reply` (up).
    case propertySet, propertySetReply
    /// `thing/service/property/get` (down) and its `_reply` (up).
    case propertyGet, propertyGetReply
    /// `thing/event/{identifier}/post` (up) and its `_reply` (down).
    case eventPost(String), eventPostReply(String)
    /// `thing/service/{identifier}` (down) and `{identifier}_reply` (up).
    case service(String), serviceReply(String)
    /// `thing/model/up_raw` (up) and its `_reply`; `thing/model/down_raw` (down) and its `_reply`.
    case upRaw, upRawReply, downRaw, downRawReply
    /// `rrpc/request/{messageId}` (down) and `rrpc/response/{messageId}` (up).
    case rrpcRequest(String), rrpcResponse(String)
    /// `/{pk}/{dn}/user/{rest}`: the device's own custom topics.
    case user(String)
    /// `/shadow/update/{pk}/{dn}` (up: the device's shadow requests) and `/shadow/get/{pk}/{dn}`
    /// (down: the cloud's replies and pushes).
    case shadowUpdate, shadowGet
    /// `/ota/device/inform|progress/{pk}/{dn}` (up: the version a device runs, how far an
    /// upgrade went) and `/ota/device/upgrade/{pk}/{dn}` (down: an upgrade offered).
    case firmwareInform, firmwareProgress, firmwareUpgrade
    /// `thing/ota/firmware/get` (up: the device asks for its upgrade) and its `_reply`.
    case firmwareGet, firmwareGetReply
    /// `/ext/session/{pk}/{dn}/{rest}`: a gateway's sub-device sessions (`combine/login`,
    /// `combine/batch_login`, `combine/logout`, `combine/batch_logout`, each with `_reply`).
    case session(String)
    /// Any other `/sys/{pk}/{dn}/{rest}` topic (OTA, tags, gateway topics, …).
    case system(String)

    /// The part after `/sys/{pk}/{dn}/` (or after `/{pk}/{dn}/` for user topics).
    var path: String {
        switch self {
        case .propertyPost: return "thing/event/property/post"
        case .propertyPostReply: return "thing/event/property/post_reply"
        case .propertySet: return "thing/service/property/set"
        case .propertySetReply: return "thing/service/property/set_reply"
        case .propertyGet: return "thing/service/property/get"
        case .propertyGetReply: return "thing/service/property/get_reply"
        case .eventPost(let identifier): return "thing/event/\(identifier)/post"
        case .eventPostReply(let identifier): return "thing/event/\(identifier)/post_reply"
        case .service(let identifier): return "thing/service/\(identifier)"
        case .serviceReply(let identifier): return "thing/service/\(identifier)_reply"
        case .upRaw: return "thing/model/up_raw"
        case .upRawReply: return "thing/model/up_raw_reply"
        case .downRaw: return "thing/model/down_raw"
        case .downRawReply: return "thing/model/down_raw_reply"
        case .rrpcRequest(let id): return "rrpc/request/\(id)"
        case .rrpcResponse(let id): return "rrpc/response/\(id)"
        case .user(let rest): return "user/\(rest)"
        case .shadowUpdate: return "update"
        case .shadowGet: return "get"
        case .firmwareInform: return "inform"
        case .firmwareProgress: return "progress"
        case .firmwareUpgrade: return "upgrade"
        case .firmwareGet: return "thing/ota/firmware/get"
        case .firmwareGetReply: return "thing/ota/firmware/get_reply"
        case .session(let rest): return rest
        case .system(let rest): return rest
        }
    }

    /// The reply topic of a request topic, for requests that have one.
    public var reply: AlinkTopic? {
        switch self {
        case .propertyPost: return .propertyPostReply
        case .propertySet: return .propertySetReply
        case .propertyGet: return .propertyGetReply
        case .eventPost(let identifier): return .eventPostReply(identifier)
        case .service(let identifier): return .serviceReply(identifier)
        case .upRaw: return .upRawReply
        case .downRaw: return .downRawReply
        case .firmwareGet: return .firmwareGetReply
        case .session(let path) where !path.hasSuffix("_reply"): return .session(path + "_reply")
        // Other system requests (account/bind, deviceinfo/update, …) are answered on `…_reply`.
        case .system(let path) where !path.hasSuffix("_reply"): return .system(path + "_reply")
        default: return nil
        }
    }

    init(systemPath path: Substring) {
        // What devices send most, without splitting the path.
        switch path {
        case "thing/event/property/post": self = .propertyPost; return
        case "thing/service/property/set_reply": self = .propertySetReply; return
        case "thing/event/property/post_reply": self = .propertyPostReply; return
        case "thing/service/property/set": self = .propertySet; return
        default: break
        }
        let levels = path.split(separator: "/", omittingEmptySubsequences: false)
        switch levels.count {
        case 3 where levels[0] == "rrpc" && levels[1] == "request" && !levels[2].isEmpty:
            self = .rrpcRequest(String(levels[2]))
            return
        case 3 where levels[0] == "rrpc" && levels[1] == "response" && !levels[2].isEmpty:
            self = .rrpcResponse(String(levels[2]))
            return
        case 3 where levels[0] == "thing" && levels[1] == "model":
            switch levels[2] {
            case "up_raw": self = .upRaw; return
            case "up_raw_reply": self = .upRawReply; return
            case "down_raw": self = .downRaw; return
            case "down_raw_reply": self = .downRawReply; return
            default: break
            }
        case 3 where levels[0] == "thing" && levels[1] == "service" && !levels[2].isEmpty:
            let name = levels[2]
            if name.hasSuffix("_reply"), name.count > "_reply".count {
                self = .serviceReply(String(name.dropLast("_reply".count)))
            } else {
                self = .service(String(name))
            }
            return
        case 4 where levels[0] == "thing" && levels[1] == "ota" && levels[2] == "firmware" && (levels[3] == "get" || levels[3] == "get_reply"):
            self = levels[3] == "get" ? .firmwareGet : .firmwareGetReply
            return
        case 4 where levels[0] == "thing" && levels[1] == "service" && levels[2] == "property":
            switch levels[3] {
            case "set": self = .propertySet; return
            case "set_reply": self = .propertySetReply; return
            case "get": self = .propertyGet; return
            case "get_reply": self = .propertyGetReply; return
            default: break
            }
        case 4 where levels[0] == "thing" && levels[1] == "event" && !levels[2].isEmpty:
            let reply = levels[3] == "post_reply"
            guard reply || levels[3] == "post" else { break }
            if levels[2] == "property" {
                self = reply ? .propertyPostReply : .propertyPost
            } else {
                self = reply ? .eventPostReply(String(levels[2])) : .eventPost(String(levels[2]))
            }
            return
        default:
            break
        }
        self = .system(String(path))
    }
}

/// A topic of one device: who and what, plus the message id when it came through custom RRPC
/// (`/ext/rrpc/{messageId}/sys/{pk}/{dn}/…` or `/ext/rrpc/{messageId}/{pk}/{dn}/user/…`).
public struct AlinkDeviceTopic: Hashable, Sendable, CustomStringConvertible {
    /// The device the topic belongs to (`{pk}/{dn}` in the name).
    public var device: AlinkDeviceIdentity
    /// What the topic is for.
    public var topic: AlinkTopic
    /// The `{messageId}` of a custom RRPC topic, whose reply goes back on the same topic; nil otherwise.
    public var rrpcMessageID: String?

    /// A topic from its parts; nothing is checked.
    public init(device: AlinkDeviceIdentity, topic: AlinkTopic, rrpcMessageID: String? = nil) {
        self.device = device
        self.topic = topic
        self.rrpcMessageID = rrpcMessageID
    }

    /// The MQTT topic name.
    public var name: String {
        let base: String
        switch topic {
        case .user:
            base = "/\(device.productKey)/\(device.deviceName)/\(topic.path)"
        case .shadowUpdate, .shadowGet:
            base = "/shadow/\(topic.path)/\(device.productKey)/\(device.deviceName)"
        case .firmwareInform, .firmwareProgress, .firmwareUpgrade:
            base = "/ota/device/\(topic.path)/\(device.productKey)/\(device.deviceName)"
        case .session:
            base = "/ext/session/\(device.productKey)/\(device.deviceName)/\(topic.path)"
        default:
            base = "/sys/\(device.productKey)/\(device.deviceName)/\(topic.path)"
        }
        guard let rrpcMessageID else { return base }
        return "/ext/rrpc/\(rrpcMessageID)\(base)"
    }

    public var description: String { name }

    /// Reads `/sys/{pk}/{dn}/…`, `/{pk}/{dn}/user/…` and either behind `/ext/rrpc/{id}`, and
    /// `/shadow/update|get/{pk}/{dn}` and `/ota/device/inform|progress|upgrade/{pk}/{dn}`; nil for anything else, including names that are not valid
    /// product keys or device names.
    public init?(parsing name: String) {
        var rest = Substring(name)
        if rest.hasPrefix("/ext/session/") {
            let levels = rest.dropFirst("/ext/session/".count).split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard levels.count == 3, !levels[2].isEmpty, !levels[2].contains("+"), !levels[2].contains("#"),
                let device = try? AlinkDeviceIdentity(productKey: String(levels[0]), deviceName: String(levels[1]))
            else { return nil }
            self.init(device: device, topic: .session(String(levels[2])))
            return
        }
        var rrpc: String?
        if rest.hasPrefix("/ext/rrpc/") {
            let afterPrefix = rest.dropFirst("/ext/rrpc/".count)
            guard let slash = afterPrefix.firstIndex(of: "/"), slash != afterPrefix.startIndex else { return nil }
            rrpc = String(afterPrefix[..<slash])
            rest = afterPrefix[slash...]
        }
        let levels = rest.split(separator: "/", maxSplits: 4, omittingEmptySubsequences: false)
        guard levels.count >= 4, levels[0].isEmpty else { return nil }
        if levels[1] == "shadow", levels.count == 5, rrpc == nil {
            guard levels[2] == "update" || levels[2] == "get",
                let device = try? AlinkDeviceIdentity(productKey: String(levels[3]), deviceName: String(levels[4]))
            else { return nil }
            self.init(device: device, topic: levels[2] == "update" ? .shadowUpdate : .shadowGet)
            return
        }
        if levels[1] == "ota", levels[2] == "device", levels.count == 5, rrpc == nil {
            let topics: [Substring: AlinkTopic] = ["inform": .firmwareInform, "progress": .firmwareProgress, "upgrade": .firmwareUpgrade]
            let rest = levels[4].split(separator: "/", omittingEmptySubsequences: false)
            if let topic = topics[levels[3]] {
                guard rest.count == 2, let device = try? AlinkDeviceIdentity(productKey: String(rest[0]), deviceName: String(rest[1])) else { return nil }
                self.init(device: device, topic: topic)
                return
            }
        }
        if levels[1] == "sys", levels.count == 5 {
            guard let device = try? AlinkDeviceIdentity(productKey: String(levels[2]), deviceName: String(levels[3])) else { return nil }
            self.init(device: device, topic: AlinkTopic(systemPath: levels[4]), rrpcMessageID: rrpc)
            return
        }
        guard levels[3] == "user", levels.count == 5, !levels[4].isEmpty else { return nil }
        guard let device = try? AlinkDeviceIdentity(productKey: String(levels[1]), deviceName: String(levels[2])) else { return nil }
        self.init(device: device, topic: .user(String(levels[4])), rrpcMessageID: rrpc)
    }
}

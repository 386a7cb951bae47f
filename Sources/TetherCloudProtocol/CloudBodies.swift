public import TetherCore

// The Open API's answers that the SDK reads and the cloud writes, as types: one definition of
// each body's fields and their JSON names (`shared/reference/gizwits-openapi.md` §2 and the
// cloud's OpenAPI document).

/// A user's session: `POST /app/users`, `/app/login`, `/app/token/refresh`.
public struct SessionBody: Sendable, Hashable {
    public var uid: String
    /// A secret: never log it.
    public var token: String
    /// Unix seconds.
    public var expireAt: Int64

    public init(uid: String, token: String, expireAt: Int64) {
        self.uid = uid
        self.token = token
        self.expireAt = expireAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(uid: try reader.string("uid"), token: try reader.string("token"), expireAt: try reader.int("expire_at"))
    }

    public var json: JSONValue { ["uid": .string(uid), "token": .string(token), "expire_at": .int(expireAt)] }
}

/// A user's profile: `GET /app/users`.
public struct UserBody: Sendable, Hashable {
    public var uid: String
    public var username: String
    public var phone: String
    public var email: String
    public var name: String
    public var gender: String
    public var birthday: String
    public var address: String
    public var lang: String
    public var remark: String
    public var isAnonymous: Bool

    public init(
        uid: String, username: String = "", phone: String = "", email: String = "", name: String = "", gender: String = "N",
        birthday: String = "", address: String = "", lang: String = "en", remark: String = "", isAnonymous: Bool = false
    ) {
        self.uid = uid
        self.username = username
        self.phone = phone
        self.email = email
        self.name = name
        self.gender = gender
        self.birthday = birthday
        self.address = address
        self.lang = lang
        self.remark = remark
        self.isAnonymous = isAnonymous
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            uid: try reader.string("uid"), username: try reader.optionalString("username") ?? "", phone: try reader.optionalString("phone") ?? "",
            email: try reader.optionalString("email") ?? "", name: try reader.optionalString("name") ?? "",
            gender: try reader.optionalString("gender") ?? "N", birthday: try reader.optionalString("birthday") ?? "",
            address: try reader.optionalString("address") ?? "", lang: try reader.optionalString("lang") ?? "en",
            remark: try reader.optionalString("remark") ?? "", isAnonymous: try reader.optionalBool("is_anonymous") ?? false
        )
    }

    public var json: JSONValue {
        [
            "uid": .string(uid), "username": .string(username), "phone": .string(phone), "email": .string(email),
            "name": .string(name), "gender": .string(gender), "birthday": .string(birthday), "address": .string(address),
            "lang": .string(lang), "remark": .string(remark), "is_anonymous": .bool(isAnonymous),
        ]
    }
}

/// A bound device as the cloud lists it: `GET /app/bindings`, `/app/devices/{did}`,
/// `POST /app/bind_mac`. The reference's *Device* object and what pygizwits also reads.
public struct DeviceBody: Sendable, Hashable {
    public var did: String
    public var productKey: String
    public var productName: String
    /// 12 lower-case hex digits, or "".
    public var mac: String
    /// The LAN passcode, given to users bound to the device.
    public var passcode: String
    public var isOnline: Bool
    public var isDisabled: Bool
    /// `normal`, `center_control` or `sub_dev`.
    public var type: String
    /// The user's remark, alias and labels.
    public var remark: String
    public var alias: String
    public var labels: [String]
    /// `special`, `normal`, `owner` or `guest`.
    public var role: String
    /// Where the real-time side is: host, MQTT ports, WebSocket ports.
    public var host: String
    public var port: Int64
    public var tlsPort: Int64
    public var webSocketPort: Int64
    public var secureWebSocketPort: Int64
    public var protocolVersion: String
    public var wifiSoftVersion: String
    public var mcuSoftVersion: String
    public var mcuHardVersion: String
    /// Tether: the home the device is placed in and its room there, when the reader is one of
    /// the home's members.
    public var homeID: Int64?
    public var roomID: Int64?

    public init(
        did: String, productKey: String, productName: String = "", mac: String = "", passcode: String = "", isOnline: Bool = false,
        isDisabled: Bool = false, type: String = "normal", remark: String = "", alias: String = "", labels: [String] = [], role: String = "",
        host: String = "", port: Int64 = 0, tlsPort: Int64 = 0, webSocketPort: Int64 = 0, secureWebSocketPort: Int64 = 0,
        protocolVersion: String = "", wifiSoftVersion: String = "", mcuSoftVersion: String = "", mcuHardVersion: String = "", homeID: Int64? = nil,
        roomID: Int64? = nil
    ) {
        self.did = did
        self.productKey = productKey
        self.productName = productName
        self.mac = mac
        self.passcode = passcode
        self.isOnline = isOnline
        self.isDisabled = isDisabled
        self.type = type
        self.remark = remark
        self.alias = alias
        self.labels = labels
        self.role = role
        self.host = host
        self.port = port
        self.tlsPort = tlsPort
        self.webSocketPort = webSocketPort
        self.secureWebSocketPort = secureWebSocketPort
        self.protocolVersion = protocolVersion
        self.wifiSoftVersion = wifiSoftVersion
        self.mcuSoftVersion = mcuSoftVersion
        self.mcuHardVersion = mcuHardVersion
        self.homeID = homeID
        self.roomID = roomID
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            did: try reader.string("did"), productKey: try reader.string("product_key"),
            productName: try reader.optionalString("product_name") ?? "", mac: try reader.optionalString("mac") ?? "",
            passcode: try reader.optionalString("passcode") ?? "", isOnline: try reader.optionalBool("is_online") ?? false,
            isDisabled: try reader.optionalBool("is_disabled") ?? false, type: try reader.optionalString("type") ?? "normal",
            remark: try reader.optionalString("remark") ?? "", alias: try reader.optionalString("dev_alias") ?? "",
            labels: try reader.optionalStrings("dev_label") ?? [], role: try reader.optionalString("role") ?? "",
            host: try reader.optionalString("host") ?? "", port: try reader.optionalInt("port") ?? 0,
            tlsPort: try reader.optionalInt("port_s") ?? 0, webSocketPort: try reader.optionalInt("ws_port") ?? 0,
            secureWebSocketPort: try reader.optionalInt("wss_port") ?? 0, protocolVersion: try reader.optionalString("proto_ver") ?? "",
            wifiSoftVersion: try reader.optionalString("wifi_soft_version") ?? "", mcuSoftVersion: try reader.optionalString("mcu_soft_version") ?? "",
            mcuHardVersion: try reader.optionalString("mcu_hard_version") ?? "", homeID: try reader.optionalInt("home_id"),
            roomID: try reader.optionalInt("room_id")
        )
    }

    public var json: JSONValue {
        [
            "product_key": .string(productKey), "did": .string(did), "mac": .string(mac), "is_online": .bool(isOnline),
            "passcode": .string(passcode), "host": .string(host), "port": .int(port), "port_s": .int(tlsPort),
            "ws_port": .int(webSocketPort), "wss_port": .int(secureWebSocketPort), "remark": .string(remark),
            "is_disabled": .bool(isDisabled), "type": .string(type), "dev_alias": .string(alias),
            "dev_label": .array(labels.map(JSONValue.string)), "role": .string(role), "proto_ver": .string(protocolVersion),
            "wifi_soft_version": .string(wifiSoftVersion), "is_sandbox": .bool(false), "product_name": .string(productName),
            "protoc": .int(3), "mcu_soft_version": .string(mcuSoftVersion), "mcu_hard_version": .string(mcuHardVersion),
            "home_id": homeID.map(JSONValue.int) ?? .null, "room_id": roomID.map(JSONValue.int) ?? .null,
        ]
    }
}

/// A command of the ledger (Tether): `GET /app/commands/{id}`, `/app/devices/{did}/commands`.
public struct CommandBody: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case attrs
        case raw
        case service
        /// A firmware upgrade (`upgrade`).
        case ota
    }

    public var id: Int64
    public var did: String
    public var kind: Kind
    /// `accepted`, `queued`, `sent`, `acknowledged`, `applied`, `rejected`, `expired`, `failed`.
    public var state: String
    /// The device's code, when it answered (200: accepted).
    public var code: Int?
    public var message: String
    /// Unix milliseconds.
    public var createdAt: Int64
    public var updatedAt: Int64
    public var sentAt: Int64?
    public var queueUntil: Int64?
    /// What was written (`attrs`), sent (`raw`, hex) or called (`service`, `params`, `output`).
    public var attrs: JSONValue?
    public var raw: String?
    public var service: String?
    public var params: JSONValue?
    public var output: JSONValue?
    public var upgrade: FirmwareUpgradeBody?
    /// Who sent it (Tether): `app`, or `scheduler` for a schedule's run.
    public var source: String

    public init(
        id: Int64, did: String, kind: Kind, state: String, code: Int? = nil, message: String = "", createdAt: Int64 = 0, updatedAt: Int64 = 0,
        sentAt: Int64? = nil, queueUntil: Int64? = nil, attrs: JSONValue? = nil, raw: String? = nil, service: String? = nil,
        params: JSONValue? = nil, output: JSONValue? = nil, upgrade: FirmwareUpgradeBody? = nil, source: String = "app"
    ) {
        self.id = id
        self.did = did
        self.kind = kind
        self.state = state
        self.code = code
        self.message = message
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.sentAt = sentAt
        self.queueUntil = queueUntil
        self.attrs = attrs
        self.raw = raw
        self.service = service
        self.params = params
        self.output = output
        self.upgrade = upgrade
        self.source = source
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let kindText = try reader.string("kind")
        guard let kind = Kind(rawValue: kindText) else { throw CloudBodyError(field: "kind", "must be attrs, raw, service or ota, not \(kindText)") }
        self.init(
            id: try reader.int("id"), did: try reader.string("did"), kind: kind, state: try reader.string("state"),
            code: try reader.optionalInt("code").map { Int(clamping: $0) }, message: try reader.optionalString("message") ?? "",
            createdAt: try reader.optionalInt("created_at") ?? 0, updatedAt: try reader.optionalInt("updated_at") ?? 0,
            sentAt: try reader.optionalInt("sent_at"), queueUntil: try reader.optionalInt("queue_until"),
            attrs: reader.value("attrs"), raw: try reader.optionalString("raw"), service: try reader.optionalString("service"),
            params: reader.value("params"), output: reader.value("output"),
            upgrade: try reader.value("upgrade").map { value throws(CloudBodyError) in try FirmwareUpgradeBody(json: value) },
            source: try reader.optionalString("source") ?? "app"
        )
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "id": .int(id), "did": .string(did), "kind": .string(kind.rawValue), "state": .string(state),
            "message": .string(message), "created_at": .int(createdAt), "updated_at": .int(updatedAt),
            "code": code.map { .int(Int64($0)) } ?? .null, "sent_at": sentAt.map(JSONValue.int) ?? .null,
            "queue_until": queueUntil.map(JSONValue.int) ?? .null, "source": .string(source),
        ]
        if let attrs { object["attrs"] = attrs }
        if let raw { object["raw"] = .string(raw) }
        if let service { object["service"] = .string(service) }
        if let params { object["params"] = params }
        if let output { object["output"] = output }
        if let upgrade { object["upgrade"] = upgrade.json }
        return .object(object)
    }
}

/// A command just accepted into the ledger: `POST /app/control/{did}`, `…/services/{id}`.
public struct CommandAcceptedBody: Sendable, Hashable {
    public var commandID: Int64
    public var state: String

    public init(commandID: Int64, state: String) {
        self.commandID = commandID
        self.state = state
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(commandID: try reader.int("command_id"), state: try reader.string("state"))
    }

    public var json: JSONValue { ["command_id": .int(commandID), "state": .string(state)] }
}

/// Which devices an operation on several succeeded for: `POST`/`DELETE /app/bindings`.
public struct DidResultsBody: Sendable, Hashable {
    public var success: [String]
    public var failed: [String]

    public init(success: [String], failed: [String]) {
        self.success = success
        self.failed = failed
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(success: try reader.optionalStrings("success") ?? [], failed: try reader.optionalStrings("failed") ?? [])
    }

    public var json: JSONValue { ["success": .array(success.map(JSONValue.string)), "failed": .array(failed.map(JSONValue.string))] }
}

/// A device's latest report: `GET /app/devdata/{did}/latest` (`updated_at` 0: none in 24 h).
public struct LatestStatusBody: Sendable, Hashable {
    public var did: String
    /// Unix seconds.
    public var updatedAt: Int64
    public var attrs: JSONObject

    public init(did: String, updatedAt: Int64, attrs: JSONObject) {
        self.did = did
        self.updatedAt = updatedAt
        self.attrs = attrs
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(did: try reader.string("did"), updatedAt: try reader.int("updated_at"), attrs: try reader.optionalObject("attr") ?? [:])
    }

    public var json: JSONValue { ["did": .string(did), "updated_at": .int(updatedAt), "attr": .object(attrs)] }
}

/// `GET /app/bindings`: one page of the user's devices.
public struct DeviceListBody: Sendable, Hashable {
    public var devices: [DeviceBody]

    public init(devices: [DeviceBody]) { self.devices = devices }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let items = reader.value("devices")?.arrayValue else { throw CloudBodyError(field: "devices", "must be an array") }
        devices = try items.map { item throws(CloudBodyError) in try DeviceBody(json: item) }
    }

    public var json: JSONValue { ["devices": .array(devices.map(\.json))] }
}

/// `PUT /app/users`: when the change was made and, after a password change (Tether), the
/// caller's new token: every other session ended.
public struct UserUpdatedBody: Sendable, Hashable {
    /// ISO 8601.
    public var updatedAt: String
    /// A secret: never log it. Present with `expireAt`.
    public var token: String?
    /// Unix seconds.
    public var expireAt: Int64?

    public init(updatedAt: String, token: String? = nil, expireAt: Int64? = nil) {
        self.updatedAt = updatedAt
        self.token = token
        self.expireAt = expireAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(updatedAt: try reader.string("updatedAt"), token: try reader.optionalString("token"), expireAt: try reader.optionalInt("expire_at"))
        if token != nil, expireAt == nil { throw CloudBodyError(field: "expire_at", "is required with token") }
    }

    public var json: JSONValue {
        var object: JSONObject = ["updatedAt": .string(updatedAt)]
        if let token { object["token"] = .string(token) }
        if let expireAt { object["expire_at"] = .int(expireAt) }
        return .object(object)
    }
}

/// `POST /app/iot_token` (Tether): a single-use token a device of the user's presents on
/// `/sys/{pk}/{dn}/account/bind` to be bound to the user (the channel SDK's `iotToken`).
public struct IoTTokenBody: Sendable, Hashable {
    public var token: String
    /// When the token stops working (Unix seconds).
    public var expireAt: Int64

    public init(token: String, expireAt: Int64) {
        self.token = token
        self.expireAt = expireAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(token: try reader.text("iot_token"), expireAt: try reader.int("expire_at"))
    }

    public var json: JSONValue { ["iot_token": .string(token), "expire_at": .int(expireAt)] }
}

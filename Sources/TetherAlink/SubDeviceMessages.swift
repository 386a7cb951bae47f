public import TetherCore

/// A gateway's proof that it holds a sub-device's secret (`thing/topo/add`, `combine/login`):
/// the sub-device's HMAC of `clientId{cid}deviceName{dn}productKey{pk}timestamp{ts}`.
public struct SubDeviceSignIn: Hashable, Sendable {
    public var device: AlinkDeviceIdentity
    public var clientID: String
    /// Unix milliseconds, as text (as the device SDKs send it).
    public var timestamp: String
    public var signMethod: AlinkSignMethod
    public var sign: String
    public var cleanSession: Bool

    public init(
        device: AlinkDeviceIdentity, clientID: String, timestamp: String, signMethod: AlinkSignMethod, sign: String, cleanSession: Bool = false
    ) {
        self.device = device
        self.clientID = clientID
        self.timestamp = timestamp
        self.signMethod = signMethod
        self.sign = sign
        self.cleanSession = cleanSession
    }

    /// Signs for `device` with its secret at `milliseconds`.
    public static func signed(
        _ device: AlinkDeviceIdentity, secret: String, atMilliseconds milliseconds: Int64, signMethod: AlinkSignMethod = .hmacsha256
    ) -> SubDeviceSignIn {
        let clientID = "\(device.productKey).\(device.deviceName)"
        var signIn = SubDeviceSignIn(device: device, clientID: clientID, timestamp: String(milliseconds), signMethod: signMethod, sign: "")
        signIn.sign = signMethod.sign(signIn.content, key: secret)
        return signIn
    }

    /// What the signature covers.
    public var content: String { "clientId\(clientID)deviceName\(device.deviceName)productKey\(device.productKey)timestamp\(timestamp)" }

    /// Whether the signature is the sub-device's with `secret`.
    public func verify(secret: String) -> Bool { signMethod.verify(Array(sign.utf8), content: content, key: secret) }

    /// The timestamp in Unix seconds; nil when it is not a plausible time.
    public var timestampSeconds: Int64? {
        guard var stamp = Int64(timestamp), (0...100_000_000_000_000).contains(stamp) else { return nil }
        if stamp > 100_000_000_000 { stamp /= 1000 }
        return stamp
    }

    /// Reads one entry; `method` is the request-wide `signMethod` of a batch login.
    init(reading object: JSONObject, method: String? = nil) throws(TetherError) {
        let device = try SubDeviceMessages.identity(object)
        guard let clientID = object["clientId"]?.stringValue, (1...256).contains(clientID.utf8.count),
            let timestamp = object["timestamp"].flatMap(SubDeviceMessages.text), (1...20).contains(timestamp.utf8.count),
            let sign = object["sign"]?.stringValue, (1...128).contains(sign.utf8.count)
        else {
            throw TetherError(.malformedPayload, "a sub-device sign-in needs clientId, timestamp and sign")
        }
        let name = object["signmethod"]?.stringValue ?? object["signMethod"]?.stringValue ?? method ?? ""
        guard let signMethod = AlinkSignMethod(rawValue: name.lowercased()) else {
            throw TetherError(.malformedPayload, "a sub-device's signMethod is hmacSha256, hmacSha1 or hmacMd5")
        }
        let clean = object["cleanSession"].flatMap(SubDeviceMessages.text)
        self.init(device: device, clientID: clientID, timestamp: timestamp, signMethod: signMethod, sign: sign, cleanSession: clean == "true")
    }

    var json: JSONObject {
        [
            "productKey": .string(device.productKey), "deviceName": .string(device.deviceName), "clientId": .string(clientID),
            "timestamp": .string(timestamp), "signmethod": .string(Self.methodName(signMethod)), "sign": .string(sign),
            "cleanSession": .string(cleanSession ? "true" : "false"),
        ]
    }

    /// `hmacSha256`, as the device SDKs spell it.
    static func methodName(_ method: AlinkSignMethod) -> String {
        switch method {
        case .hmacsha256: "hmacSha256"
        case .hmacsha1: "hmacSha1"
        case .hmacmd5: "hmacMd5"
        }
    }
}

/// The gateway requests about sub-devices (`shared/reference/alink-mqtt.md` §3): what they carry,
/// read from and written to the Alink envelope.
public enum SubDeviceMessages {
    /// At most this many sub-devices per request.
    public static let maximumDevices = 50

    /// `thing/topo/add` (`params`: sign-ins) and `combine/batch_login` (`params`: `{signMethod,
    /// deviceList}`) or `combine/login` (`params`: one sign-in).
    public static func signIns(_ request: AlinkRequest) throws(TetherError) -> [SubDeviceSignIn] {
        let entries: [JSONObject]
        var method: String?
        switch request.params {
        case .array(let items):
            entries = try objects(items)
        case .object(let object) where object["deviceList"] != nil:
            guard case .array(let items)? = object["deviceList"] else { throw TetherError(.malformedPayload, "deviceList must be an array") }
            entries = try objects(items)
            method = object["signMethod"]?.stringValue ?? object["signmethod"]?.stringValue
        case .object(let object):
            entries = [object]
        default:
            throw TetherError(.malformedPayload, "a sub-device request's params are an array or an object")
        }
        return try entries.map { object throws(TetherError) in try SubDeviceSignIn(reading: object, method: method) }
    }

    /// `thing/topo/delete`, `combine/batch_logout` (`params`: `[{productKey, deviceName}]`) and
    /// `combine/logout` (one object).
    public static func identities(_ request: AlinkRequest) throws(TetherError) -> [AlinkDeviceIdentity] {
        let entries: [JSONObject]
        switch request.params {
        case .array(let items): entries = try objects(items)
        case .object(let object): entries = [object]
        default: throw TetherError(.malformedPayload, "a sub-device request's params are an array or an object")
        }
        return try entries.map { object throws(TetherError) in try identity(object) }
    }

    /// The request a gateway sends to add sub-devices to its topology.
    public static func topoAdd(id: String, _ signIns: [SubDeviceSignIn]) -> AlinkRequest {
        AlinkRequest(id: id, method: "thing.topo.add", params: .array(signIns.map { .object($0.json) }))
    }

    /// The batch login of sub-devices through their gateway.
    public static func login(id: String, _ signIns: [SubDeviceSignIn]) -> AlinkRequest {
        var list: [JSONValue] = []
        for signIn in signIns {
            var entry = signIn.json
            entry["signmethod"] = nil
            list.append(.object(entry))
        }
        let method = signIns.first.map { SubDeviceSignIn.methodName($0.signMethod) } ?? "hmacSha256"
        return AlinkRequest(id: id, method: "combine.login", params: ["signMethod": .string(method), "deviceList": .array(list)])
    }

    /// `thing/topo/delete` or `combine/batch_logout`.
    public static func list(id: String, method: String, _ devices: [AlinkDeviceIdentity]) -> AlinkRequest {
        AlinkRequest(id: id, method: method, params: .array(devices.map(json)))
    }

    /// A reply's `data`: the devices, `[{productKey, deviceName}]`.
    public static func json(_ device: AlinkDeviceIdentity) -> JSONValue {
        ["productKey": .string(device.productKey), "deviceName": .string(device.deviceName)]
    }

    /// Reads a reply's `data` list of devices.
    public static func devices(_ data: JSONValue) throws(TetherError) -> [AlinkDeviceIdentity] {
        guard case .array(let items) = data, !items.isEmpty else { return [] }
        return try items.map { item throws(TetherError) in
            guard case .object(let object) = item else { throw TetherError(.malformedPayload, "each sub-device is an object") }
            return try identity(object)
        }
    }

    static func objects(_ items: [JSONValue]) throws(TetherError) -> [JSONObject] {
        guard (1...maximumDevices).contains(items.count) else {
            throw TetherError(.malformedPayload, "a sub-device request names 1 to \(maximumDevices) devices")
        }
        return try items.map { item throws(TetherError) in
            guard case .object(let object) = item else { throw TetherError(.malformedPayload, "each sub-device is an object") }
            return object
        }
    }

    static func identity(_ object: JSONObject) throws(TetherError) -> AlinkDeviceIdentity {
        guard let productKey = object["productKey"]?.stringValue, let deviceName = object["deviceName"]?.stringValue else {
            throw TetherError(.malformedPayload, "a sub-device needs productKey and deviceName")
        }
        do {
            return try AlinkDeviceIdentity(productKey: productKey, deviceName: deviceName)
        } catch {
            throw TetherError(.malformedPayload, error.message)
        }
    }

    static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}

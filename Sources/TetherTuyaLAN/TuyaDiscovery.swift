import NIOCore
public import TetherCore

/// What a device announces on UDP 6666/6667 (§7), and the 3.5 probe apps send to UDP 7000.
public struct TuyaAnnouncement: Hashable, Sendable {
    public var ip: String
    public var deviceID: String
    public var productKey: String
    public var version: String
    public var active: Int64?
    public var ability: Int64?
    public var encrypt: Bool?

    public init(ip: String, deviceID: String, productKey: String, version: String, active: Int64? = 2, ability: Int64? = 0, encrypt: Bool? = true) {
        self.ip = ip
        self.deviceID = deviceID
        self.productKey = productKey
        self.version = version
        self.active = active
        self.ability = ability
        self.encrypt = encrypt
    }

    /// Reads the JSON; real devices spell `ability` as `ablilty`, and both are accepted.
    public init(json payload: [UInt8]) throws(TetherError) {
        let document = try JSONValue.parse(payload)
        guard let ip = document["ip"]?.stringValue, let deviceID = document["gwId"]?.stringValue else {
            throw TetherError(.malformedPayload, "an announcement without ip and gwId")
        }
        func integer(_ key: String) -> Int64? { if case .int(let value)? = document[key] { value } else { nil } }
        self.init(
            ip: ip, deviceID: deviceID, productKey: document["productKey"]?.stringValue ?? "", version: document["version"]?.stringValue ?? "",
            active: integer("active"), ability: integer("ablilty") ?? integer("ability"),
            encrypt: { if case .bool(let value)? = document["encrypt"] { value } else { nil } }())
    }

    public var json: [UInt8] {
        var object: JSONObject = ["ip": .string(ip), "gwId": .string(deviceID)]
        if let active { object["active"] = .int(active) }
        if let ability { object["ablilty"] = .int(ability) }
        if let encrypt { object["encrypt"] = .bool(encrypt) }
        object["productKey"] = .string(productKey)
        object["version"] = .string(version)
        return JSONValue.object(object).serializedBytes()
    }
}

/// Discovery datagrams (§7): announcements in every form devices send, and the 3.5 probe.
public enum TuyaDiscovery {
    /// `md5("yGAdlopoPVldABfn")`: the key every device encrypts its announcement with.
    public static let udpKey: [UInt8] = TuyaCrypto.md5(Array("yGAdlopoPVldABfn".utf8))

    /// An announcement: a 55AA frame with plaintext JSON (6666) or AES-ECB under ``udpKey``
    /// (6667), or a 6699 frame sealed with ``udpKey`` (3.5, and tuyamock for every version).
    public static func announcement(in datagram: [UInt8]) throws(TetherError) -> TuyaAnnouncement {
        var buffer = ByteBuffer(bytes: datagram)
        let prefix = buffer.getInteger(at: 0, as: UInt32.self)
        let integrity: TuyaFrame.Integrity = prefix == TuyaFrame.prefix6699 ? .gcm(udpKey) : .crc32
        guard let frame = try TuyaFrame.read(from: &buffer, integrity: integrity, maximumLength: 4096) else {
            throw TetherError(.malformedFrame, "a truncated discovery datagram")
        }
        var body = frame.body[...]
        if body.count >= 4, body.prefix(3).allSatisfy({ $0 == 0 }) { body = body.dropFirst(4) }
        if case .gcm = integrity { return try TuyaAnnouncement(json: Array(body)) }
        if body.first == UInt8(ascii: "{") { return try TuyaAnnouncement(json: Array(body)) }
        return try TuyaAnnouncement(json: try TuyaCrypto.ecbDecrypt(body, key: udpKey))
    }

    /// The datagram a device sends: 3.1 plaintext for UDP 6666; 3.2–3.4 ECB for 6667; 3.5 GCM.
    public static func datagram(_ announcement: TuyaAnnouncement, version: TuyaVersion, iv: [UInt8]? = nil) throws(TetherError) -> [UInt8] {
        var buffer = ByteBuffer()
        let returnCode: [UInt8] = [0, 0, 0, 0]
        switch version {
        case .v31:
            try TuyaFrame(sequence: 0, command: .udpAnnouncement, body: returnCode + announcement.json).write(to: &buffer, integrity: .crc32)
        case .v32, .v33, .v34:
            let sealed = try TuyaCrypto.ecbEncrypt(announcement.json, key: udpKey)
            try TuyaFrame(sequence: 0, command: .udpAnnouncement, body: returnCode + sealed).write(to: &buffer, integrity: .crc32)
        case .v35:
            try TuyaFrame(sequence: 0, command: .udpAnnouncement, body: returnCode + announcement.json).write(
                to: &buffer, integrity: .gcm(udpKey), iv: iv ?? TuyaCodec.randomIV())
        }
        return Array(buffer.readableBytesView)
    }

    /// The UDP port an announcement of `version` goes to.
    public static func port(for version: TuyaVersion) -> Int { version == .v31 ? 6666 : 6667 }

    /// The 3.5 probe an app sends to UDP 7000: `REQ_DEVINFO` with `{"from":"app","ip":…}`.
    public static func probe(appIP: String, iv: [UInt8]? = nil) throws(TetherError) -> [UInt8] {
        var buffer = ByteBuffer()
        let payload = JSONValue.object(["from": "app", "ip": .string(appIP)]).serializedBytes()
        try TuyaFrame(sequence: 0, command: .deviceInfoRequest, body: payload).write(to: &buffer, integrity: .gcm(udpKey), iv: iv ?? TuyaCodec.randomIV())
        return Array(buffer.readableBytesView)
    }

    /// The address a probe asks devices to answer to.
    public static func probeAddress(in datagram: [UInt8]) throws(TetherError) -> String {
        var buffer = ByteBuffer(bytes: datagram)
        guard let frame = try TuyaFrame.read(from: &buffer, integrity: .gcm(udpKey), maximumLength: 4096), frame.command == .deviceInfoRequest else {
            throw TetherError(.malformedFrame, "not a REQ_DEVINFO probe")
        }
        guard let ip = try JSONValue.parse(frame.body)["ip"]?.stringValue else { throw TetherError(.malformedPayload, "a probe without ip") }
        return ip
    }
}

public import TetherCore

/// How an upgrade notice signs its package: the digest named in `signMethod`, lowercase hex
/// in `sign` (the Python device SDK compares `hexdigest()` with it).
public enum FirmwareSignMethod: String, Sendable, Hashable, CaseIterable {
    case sha256 = "SHA256"
    case md5 = "Md5"
}

/// `/ota/device/inform/{pk}/{dn}` (up): the firmware version a device's module runs. Devices
/// send it after they connect and after an upgrade; the cloud answers nothing.
public struct FirmwareVersionReport: Sendable, Hashable {
    public var id: String
    public var version: String
    /// `default` when the device names no module.
    public var module: String

    public init(id: String = "1", version: String, module: String = "default") {
        self.id = id
        self.version = version
        self.module = module
    }

    /// Reads a report; `malformedPayload` without a valid `version`, or with a bad `module`.
    public init(parsing bytes: some Collection<UInt8>) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: FirmwareLimits.maximumMessageSize)
        let params = object["params"]?.objectValue ?? [:]
        self.init(
            id: try AlinkLimits.id(object), version: try FirmwareLimits.name(params["version"], "version", required: true),
            module: try FirmwareLimits.name(params["module"], "module", required: false))
    }

    public var bytes: [UInt8] {
        JSONValue.object(["id": .string(id), "params": ["version": .string(version), "module": .string(module)]]).serializedBytes()
    }
}

/// `/ota/device/progress/{pk}/{dn}` (up): how far an upgrade went. `step` 1…100 is progress in
/// percent; the negative steps are Aliyun's failures.
public struct FirmwareProgressReport: Sendable, Hashable {
    public var id: String
    /// -4…100: see ``Failure``.
    public var step: Int
    public var desc: String
    public var module: String

    /// What a negative step means.
    public enum Failure: Int, Sendable, CaseIterable {
        case upgradeFailed = -1
        case downloadFailed = -2
        case verificationFailed = -3
        case flashingFailed = -4

        public var summary: String {
            switch self {
            case .upgradeFailed: "the upgrade failed"
            case .downloadFailed: "the download failed"
            case .verificationFailed: "the package did not verify"
            case .flashingFailed: "the package could not be written"
            }
        }
    }

    public init(id: String = "1", step: Int, desc: String = "", module: String = "default") {
        self.id = id
        self.step = step
        self.desc = desc
        self.module = module
    }

    /// The failure a negative step reports; nil for progress.
    public var failure: Failure? { Failure(rawValue: step) }

    /// Reads a report: `step` is a number or a decimal string (as Aliyun's SDKs send it), -4…100.
    public init(parsing bytes: some Collection<UInt8>) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: FirmwareLimits.maximumMessageSize)
        let params = object["params"]?.objectValue ?? [:]
        let step: Int?
        switch params["step"] {
        case .int(let number): step = Int(exactly: number)
        case .string(let text): step = Int(text)
        default: step = nil
        }
        guard let step, (-4...100).contains(step) else {
            throw TetherError(.malformedPayload, "an OTA progress report needs a \"step\" from -4 to 100")
        }
        let desc = params["desc"]?.stringValue ?? ""
        guard desc.utf8.count <= FirmwareLimits.maximumDescriptionLength else {
            throw TetherError(.malformedPayload, "an OTA progress \"desc\" is at most \(FirmwareLimits.maximumDescriptionLength) bytes")
        }
        self.init(id: try AlinkLimits.id(object), step: step, desc: desc, module: try FirmwareLimits.name(params["module"], "module", required: false))
    }

    public var bytes: [UInt8] {
        JSONValue.object([
            "id": .string(id), "params": ["step": .string(String(step)), "desc": .string(desc), "module": .string(module)],
        ]).serializedBytes()
    }
}

/// `/sys/{pk}/{dn}/thing/ota/firmware/get` (up): a device asks for the upgrade waiting for it;
/// the answer on `…/get_reply` carries a ``FirmwareUpgradeNotice``'s `data`, or `{}` for none.
public struct FirmwareQuery: Sendable, Hashable {
    public var id: String
    /// nil: every module.
    public var module: String?

    public init(id: String = "1", module: String? = nil) {
        self.id = id
        self.module = module
    }

    public init(parsing bytes: some Collection<UInt8>) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: FirmwareLimits.maximumMessageSize)
        let module = object["params"]?["module"]
        self.init(id: try AlinkLimits.id(object), module: module == nil ? nil : try FirmwareLimits.name(module, "module", required: true))
    }

    public var bytes: [UInt8] {
        var params = JSONObject()
        if let module { params["module"] = .string(module) }
        return JSONValue.object(["id": .string(id), "version": "1.0", "params": .object(params), "method": "thing.ota.firmware.get"]).serializedBytes()
    }
}

/// An upgrade the cloud offers a device: pushed on `/ota/device/upgrade/{pk}/{dn}`
/// (`{"code": "1000", "data": {…}, "id", "message"}`), or as the `data` of a firmware query's reply.
public struct FirmwareUpgradeNotice: Sendable, Hashable {
    public var id: String
    /// Where to download the package (a signed URL that expires).
    public var url: String
    public var version: String
    public var size: Int64
    public var signMethod: FirmwareSignMethod
    /// The package's digest by `signMethod`, lowercase hex.
    public var sign: String
    /// The package's MD5, lowercase hex (Aliyun sends it whatever `signMethod` is).
    public var md5: String?
    public var module: String
    public var extData: JSONValue?

    public init(
        id: String, url: String, version: String, size: Int64, signMethod: FirmwareSignMethod, sign: String, md5: String? = nil,
        module: String = "default", extData: JSONValue? = nil
    ) {
        self.id = id
        self.url = url
        self.version = version
        self.size = size
        self.signMethod = signMethod
        self.sign = sign
        self.md5 = md5
        self.module = module
        self.extData = extData
    }

    /// The `data` object, as pushed and as a query's reply carries it.
    public var data: JSONValue {
        var object: JSONObject = [
            "url": .string(url), "version": .string(version), "size": .int(size), "signMethod": .string(signMethod.rawValue),
            "sign": .string(sign), "module": .string(module),
        ]
        if let md5 { object["md5"] = .string(md5) }
        if let extData { object["extData"] = extData }
        return .object(object)
    }

    /// The push on `/ota/device/upgrade/{pk}/{dn}`.
    public var bytes: [UInt8] {
        JSONValue.object(["code": "1000", "data": data, "id": .string(id), "message": "success"]).serializedBytes()
    }

    /// Reads a push, or a query's reply (whose `data` may be `{}`: nil then).
    public init?(parsing bytes: some Collection<UInt8>) throws(TetherError) {
        let object = try AlinkLimits.object(bytes, maximumSize: FirmwareLimits.maximumMessageSize)
        let id = try AlinkLimits.id(object)
        guard let data = object["data"]?.objectValue, !data.isEmpty else { return nil }
        guard let url = data["url"]?.stringValue, !url.isEmpty, url.utf8.count <= FirmwareLimits.maximumURLLength else {
            throw TetherError(.malformedPayload, "an upgrade notice needs a \"url\" of at most \(FirmwareLimits.maximumURLLength) bytes")
        }
        let size: Int64?
        switch data["size"] {
        case .int(let number): size = number
        case .string(let text): size = Int64(text)
        default: size = nil
        }
        guard let size, size > 0 else { throw TetherError(.malformedPayload, "an upgrade notice needs a positive \"size\"") }
        guard let methodName = data["signMethod"]?.stringValue, let method = FirmwareSignMethod(rawValue: methodName) else {
            throw TetherError(.malformedPayload, "an upgrade notice's \"signMethod\" is SHA256 or Md5")
        }
        guard let sign = data["sign"]?.stringValue, FirmwareLimits.isDigest(sign, method: method) else {
            throw TetherError(.malformedPayload, "an upgrade notice's \"sign\" is the package's \(method.rawValue) in lowercase hex")
        }
        let md5 = data["md5"]?.stringValue
        if let md5, !FirmwareLimits.isDigest(md5, method: .md5) {
            throw TetherError(.malformedPayload, "an upgrade notice's \"md5\" is 32 lowercase hex digits")
        }
        self.init(
            id: id, url: url, version: try FirmwareLimits.name(data["version"], "version", required: true), size: size, signMethod: method, sign: sign,
            md5: md5, module: try FirmwareLimits.name(data["module"], "module", required: false), extData: data["extData"])
    }
}

/// Limits on what Tether reads from OTA messages.
public enum FirmwareLimits {
    static let maximumMessageSize = 16 * 1024
    static let maximumURLLength = 2048
    static let maximumDescriptionLength = 256

    /// Whether `text` is a version or module name: 1 to 64 printable ASCII characters without
    /// spaces or `/` (the cloud stores packages under these names).
    public static func isName(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }
    }

    static func name(_ value: JSONValue?, _ field: String, required: Bool) throws(TetherError) -> String {
        guard let value, value != .null else {
            guard !required else { throw TetherError(.malformedPayload, "an OTA message needs a \"\(field)\"") }
            return "default"
        }
        guard let text = value.stringValue, isName(text) else {
            throw TetherError(.malformedPayload, "an OTA \(field) is 1 to 64 printable characters without spaces or /")
        }
        return text
    }

    static func isDigest(_ text: String, method: FirmwareSignMethod) -> Bool {
        text.utf8.count == (method == .sha256 ? 64 : 32) && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

public import TetherCore

/// A firmware upgrade of one device, as apps see it (Tether extension): in a ledger entry of kind
/// `ota` (`upgrade`), in `GET /app/devices/{did}/firmware`, and pushed as `s2c_upgrade` frames
/// while it progresses.
public struct FirmwareUpgradeBody: Sendable, Hashable {
    /// The command ledger's entry (`GET /app/commands/{id}`).
    public var commandID: Int64
    public var did: String
    /// The ledger state: `queued` (offered when the device connects), `sent` (offered),
    /// `acknowledged` (the device reports progress), `applied` (it runs the new version),
    /// `failed`, `expired`.
    public var state: String
    public var firmwareID: Int64
    public var version: String
    public var module: String
    /// The device's last step: 1…100 percent, -1…-4 a failure (Aliyun's steps); nil before any.
    public var step: Int?
    /// What the device said with its last step.
    public var desc: String
    /// Unix milliseconds.
    public var updatedAt: Int64

    public init(
        commandID: Int64, did: String, state: String, firmwareID: Int64, version: String, module: String, step: Int? = nil, desc: String = "",
        updatedAt: Int64 = 0
    ) {
        self.commandID = commandID
        self.did = did
        self.state = state
        self.firmwareID = firmwareID
        self.version = version
        self.module = module
        self.step = step
        self.desc = desc
        self.updatedAt = updatedAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let step = try reader.optionalInt("step")
        if let step, !(-4...100).contains(step) { throw CloudBodyError(field: "step", "must be -4 to 100") }
        self.init(
            commandID: try reader.int("command_id"), did: try reader.string("did"), state: try reader.string("state"),
            firmwareID: try reader.int("firmware_id"), version: try reader.string("version"), module: try reader.string("module"),
            step: step.map { Int($0) }, desc: try reader.optionalString("desc") ?? "", updatedAt: try reader.optionalInt("updated_at") ?? 0)
    }

    public var json: JSONValue {
        [
            "command_id": .int(commandID), "did": .string(did), "state": .string(state), "firmware_id": .int(firmwareID), "version": .string(version),
            "module": .string(module), "step": step.map { .int(Int64($0)) } ?? .null, "desc": .string(desc), "updated_at": .int(updatedAt),
        ]
    }
}

/// A firmware package an administrator added for a product (`tether-cloud admin firmware add`).
public struct FirmwarePackageBody: Sendable, Hashable {
    public var id: Int64
    public var module: String
    public var version: String
    /// Bytes.
    public var size: Int64
    /// Lowercase hex.
    public var sha256: String
    public var md5: String
    /// Unix seconds.
    public var createdAt: Int64

    public init(id: Int64, module: String, version: String, size: Int64, sha256: String, md5: String, createdAt: Int64) {
        self.id = id
        self.module = module
        self.version = version
        self.size = size
        self.sha256 = sha256
        self.md5 = md5
        self.createdAt = createdAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.int("id"), module: try reader.string("module"), version: try reader.string("version"), size: try reader.int("size"),
            sha256: try reader.string("sha256"), md5: try reader.string("md5"), createdAt: try reader.optionalInt("created_at") ?? 0)
    }

    public var json: JSONValue {
        [
            "id": .int(id), "module": .string(module), "version": .string(version), "size": .int(size), "sha256": .string(sha256),
            "md5": .string(md5), "created_at": .int(createdAt),
        ]
    }
}

/// `GET /app/devices/{did}/firmware` (Tether extension): what the device runs, the packages of
/// its product, and its upgrades, newest first.
public struct DeviceFirmwareBody: Sendable, Hashable {
    /// A module's version as the device last reported it.
    public struct Module: Sendable, Hashable {
        public var module: String
        public var version: String
        /// Unix milliseconds.
        public var updatedAt: Int64

        public init(module: String, version: String, updatedAt: Int64) {
            self.module = module
            self.version = version
            self.updatedAt = updatedAt
        }
    }

    public var did: String
    public var modules: [Module]
    public var packages: [FirmwarePackageBody]
    public var upgrades: [FirmwareUpgradeBody]

    public init(did: String, modules: [Module], packages: [FirmwarePackageBody], upgrades: [FirmwareUpgradeBody]) {
        self.did = did
        self.modules = modules
        self.packages = packages
        self.upgrades = upgrades
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        func list(_ key: String) throws(CloudBodyError) -> [JSONValue] {
            guard let items = reader.value(key)?.arrayValue else { throw CloudBodyError(field: key, "must be an array") }
            return items
        }
        self.init(
            did: try reader.string("did"),
            modules: try list("modules").map { item throws(CloudBodyError) in
                let module = try BodyReader(item)
                return Module(module: try module.string("module"), version: try module.string("version"), updatedAt: try module.optionalInt("updated_at") ?? 0)
            },
            packages: try list("packages").map { item throws(CloudBodyError) in try FirmwarePackageBody(json: item) },
            upgrades: try list("upgrades").map { item throws(CloudBodyError) in try FirmwareUpgradeBody(json: item) })
    }

    public var json: JSONValue {
        [
            "did": .string(did),
            "modules": .array(
                modules.map { ["module": .string($0.module), "version": .string($0.version), "updated_at": .int($0.updatedAt)] }),
            "packages": .array(packages.map(\.json)), "upgrades": .array(upgrades.map(\.json)),
        ]
    }
}

/// `POST /app/devices/{did}/firmware/upgrade` (Tether extension): offer package `firmware_id` to
/// the device, now if it is connected, or when it next connects within `ttl` seconds.
public struct FirmwareUpgradeRequestBody: Sendable, Hashable {
    public var firmwareID: Int64
    /// Seconds the offer stays open (default 1 day, at most 7).
    public var ttl: Int64?

    public init(firmwareID: Int64, ttl: Int64? = nil) {
        self.firmwareID = firmwareID
        self.ttl = ttl
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let ttl = try reader.optionalInt("ttl")
        if let ttl, !(60...(7 * 86_400)).contains(ttl) { throw CloudBodyError(field: "ttl", "must be 60 to 604800 seconds") }
        self.init(firmwareID: try reader.int("firmware_id"), ttl: ttl)
    }

    public var json: JSONValue {
        var object: JSONObject = ["firmware_id": .int(firmwareID)]
        if let ttl { object["ttl"] = .int(ttl) }
        return .object(object)
    }
}

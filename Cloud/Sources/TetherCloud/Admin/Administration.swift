import Foundation
public import TetherAlink
public import TetherCloudProtocol
import TetherCore

/// What `tether-cloud admin` does: apps, products and devices made by the operator.
public struct Administration: Sendable {
    let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    public struct CreatedApp: Sendable, Equatable {
        public var appID: String
        public var appSecret: String
    }

    public func createApp(name: String) async throws -> CreatedApp {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw CloudAPIError.formInvalid(detail: "the app needs a name") }
        let app = CreatedApp(appID: Secrets.hex(bytes: 16), appSecret: Secrets.hex(bytes: 16))
        try await AppStore(database).insert(appID: app.appID, name: trimmed, secret: app.appSecret, now: Clock.unixNow())
        return app
    }

    /// Turns third-party login on for an app (or off, with nil).
    public func configureThirdParty(appID: String, issuer: ThirdPartyIssuer?) async throws {
        if let issuer {
            guard let url = URL(string: issuer.jwksURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw CloudAPIError.formInvalid(detail: "the JWKS URL must be an http or https URL")
            }
        }
        guard try await AppStore(database).setThirdParty(appID: appID, issuer) else { throw CloudAPIError.appIDInvalid(detail: "no app has this id") }
    }

    public struct CreatedProduct: Sendable, Equatable {
        public var productKey: String
        public var productSecret: String
    }

    /// Imports a product model, Gizwits data-point JSON or Aliyun TSL, validated on import
    /// (a model that fails is refused with the data point and the rule it breaks). The model is
    /// kept in the format it came in.
    ///
    /// `unsignedRegistration` accepts GAgent's unsigned `POST /dev/devices` form for new
    /// devices of this product (firmware that cannot sign); leave it off otherwise.
    /// `whitelistFreeRegistration` lets a unit holding the product secret create its own device
    /// on the gateway (Alink `authType=regnwl`).
    public func createProduct(
        name: String, modelFile: [UInt8], format: ModelFormat, sharingEnabled: Bool = false, unsignedRegistration: Bool = false,
        whitelistFreeRegistration: Bool = false, userTopics: AlinkTopicClasses = .standard
    ) async throws -> CreatedProduct {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw CloudAPIError.formInvalid(detail: "the product needs a name") }
        let product = CreatedProduct(productKey: Secrets.hex(bytes: 16), productSecret: Secrets.hex(bytes: 16))
        var model = try format.load(modelFile)
        model.productKey = product.productKey
        model.name = trimmed
        let stored = ProductStore.NewProduct(
            productKey: product.productKey, name: trimmed, secret: product.productSecret, format: format,
            modelJSON: try format.serialize(model), sharingEnabled: sharingEnabled, unsignedRegistration: unsignedRegistration,
            whitelistFreeRegistration: whitelistFreeRegistration, userTopics: userTopics
        )
        try await ProductStore(database).insert(stored, now: Clock.unixNow())
        return product
    }

    /// Replaces a product's topic classes; its devices get them when they next connect.
    public func setUserTopics(productKey: String, _ classes: AlinkTopicClasses) async throws {
        guard try await ProductStore(database).setUserTopics(productKey: productKey, classes) else {
            throw CloudAPIError.productKeyInvalid(detail: "no product \(productKey)")
        }
    }

    /// Stores a firmware package (``FirmwareCatalogue/add(productKey:module:version:bytes:)``).
    public func addFirmware(productKey: String, module: String, version: String, bytes: [UInt8]) async throws -> FirmwareRecord {
        try await FirmwareCatalogue(database: database).add(productKey: productKey, module: module, version: version, bytes: bytes)
    }

    public func firmware(productKey: String) async throws -> [FirmwareRecord] {
        try await FirmwareCatalogue(database: database).packages(productKey: productKey)
    }

    /// Offers package `firmwareID` to the given devices of its product, or to all of them: each
    /// node offers it to the devices it holds within seconds, the others when they connect.
    public func startUpgradeJob(firmwareID: Int64, dids: [String]?, lifetime: Int64) async throws -> FirmwareUpgrades.JobStarted {
        // Another process's nodes find the queued upgrades on their own; no bus is needed here.
        try await FirmwareUpgrades(database: database, bus: LocalClusterBus()).startJob(firmwareID: firmwareID, dids: dids, lifetime: lifetime)
    }

    /// A job's upgrades, one per device.
    public func upgradeJob(_ id: Int64) async throws -> [FirmwareUpgradeBody] {
        try await FirmwareUpgrades(database: database, bus: LocalClusterBus()).job(id)
    }

    /// Adds a forwarder to a product: its devices' messages of `kinds` are POSTed to `url`,
    /// signed with the returned record's secret.
    public func addForwarder(productKey: String, url: String, kinds: Set<ForwardKind>) async throws -> ForwarderRecord {
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil, url.utf8.count <= 2048 else {
            throw CloudAPIError.formInvalid(detail: "a forwarder's URL is an http or https URL")
        }
        guard !kinds.isEmpty else { throw CloudAPIError.formInvalid(detail: "a forwarder needs at least one kind") }
        guard try await ProductStore(database).find(productKey) != nil else { throw CloudAPIError.productKeyInvalid(detail: "no product \(productKey)") }
        return try await ForwarderStore(database).insert(
            productKey: productKey, url: url, secret: Secrets.hex(bytes: 32), kinds: kinds, atMs: Clock.unixMilliseconds())
    }

    public func forwarders(productKey: String?) async throws -> [ForwarderRecord] { try await ForwarderStore(database).list(productKey: productKey) }

    /// Removes a forwarder and its undelivered messages.
    public func removeForwarder(id: Int64) async throws {
        guard try await ForwarderStore(database).remove(id) else { throw CloudAPIError.notFound(detail: "no forwarder \(id)") }
    }

    /// A forwarder's messages, newest first.
    public func forwardedMessages(forwarderID: Int64, limit: Int = 50) async throws -> [(id: Int64, state: String, attempts: Int64, lastError: String)] {
        try await ForwarderStore(database).entries(forwarderID: forwarderID, limit: limit)
    }

    /// A signed download URL of package `id` under `publicURL`, valid for `lifetime` seconds.
    public func firmwareURL(id: Int64, publicURL: String, lifetime: Int64) async throws -> String {
        guard (1...FirmwareDownloads.maximumLifetime).contains(lifetime) else {
            throw CloudAPIError.formInvalid(detail: "a download URL lives 1 second to 7 days")
        }
        guard try await FirmwareCatalogue(database: database).package(id) != nil else { throw CloudAPIError.notFound(detail: "no firmware \(id)") }
        let query = try await FirmwareDownloads(database: database).query(id: id, expires: Clock.unixNow() + lifetime)
        return "\(publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL)/ota/firmware/\(id)?\(query)"
    }

    public func products() async throws -> [ProductRecord] {
        try await ProductStore(database).all()
    }

    public struct CreatedDevice: Sendable, Equatable {
        public var did: String
        public var productKey: String
        public var deviceName: String
        public var deviceSecret: String
        public var passcode: String
        /// 12 lowercase hex digits, when the device was registered with one.
        public var mac: String?

        public init(did: String, productKey: String, deviceName: String, deviceSecret: String, passcode: String, mac: String? = nil) {
            self.did = did
            self.productKey = productKey
            self.deviceName = deviceName
            self.deviceSecret = deviceSecret
            self.passcode = passcode
            self.mac = mac
        }
    }

    /// A device with its own secret for the MQTT gateway.
    public func createDevice(productKey: String, name: String, mac: String?) async throws -> CreatedDevice {
        guard try await ProductStore(database).find(productKey) != nil else {
            throw CloudAPIError.productKeyInvalid(detail: "no product has this key")
        }
        guard (1...64).contains(name.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_@.:".contains($0)) }) else {
            throw CloudAPIError.formInvalid(detail: "a device name has 1 to 64 of the characters A-Z a-z 0-9 - _ @ . :")
        }
        var normalizedMAC: String?
        if let mac { normalizedMAC = try Validation.mac(mac) }
        let credentials = DeviceCredentials.new(productKey: productKey, deviceName: name)
        let device = CreatedDevice(
            did: credentials.did, productKey: productKey, deviceName: name, deviceSecret: credentials.deviceSecret, passcode: credentials.passcode,
            mac: normalizedMAC
        )
        do {
            try await DeviceStore(database).insert(credentials, mac: normalizedMAC, at: Clock.unixNow())
        } catch {
            guard error.kind == .uniqueViolation else { throw error }
            throw CloudAPIError.macAlreadyRegistered(detail: "this product already has a device with this name or MAC")
        }
        return device
    }

    /// Registers (or replaces) the Tuya id, version and local key of a device registered here,
    /// which its owner's app may then fetch (`GET /app/devices/{did}/tuya_local_key`).
    public func setTuyaLocalKey(did: String, tuyaID: String, localKey: String, version: String) async throws {
        try await TuyaLocalKeys(database: database).set(did: did, TuyaLocalKeyBody(tuyaID: tuyaID, localKey: localKey, version: version))
    }

    /// Disables an account (its sessions end and it logs in nowhere) or enables it again.
    /// `bus` tells the running nodes at once; without one (SQLite, a separate process) they
    /// notice within a minute, when live sessions re-check their tokens.
    public func setUserDisabled(uid: String, _ disabled: Bool, bus: (any ClusterBus)? = nil) async throws {
        let updated = try await database.transaction { transaction in
            let exists = try await UserStore(transaction).setDisabled(uid: uid, disabled, now: Clock.unixNow())
            if disabled, exists { try await TokenStore(transaction).deleteAll(uid: uid) }
            return exists
        }
        guard updated else { throw CloudAPIError.userNotExist(detail: "no user has this uid") }
        await bus?.publish(.credentialsChanged(uid: uid))
    }
}

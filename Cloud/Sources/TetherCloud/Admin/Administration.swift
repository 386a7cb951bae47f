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
        try await createDevices([DeviceEntry(productKey: productKey, name: name, mac: mac)])[0]
    }

    /// Devices in bulk, all or none: every entry is checked first (product, name, MAC, secret,
    /// no name or MAC twice), then all are inserted in one transaction, in statements of
    /// ``DeviceStore/batchRows`` rows. Names or MACs a product already has are refused by name.
    public func createDevices(_ entries: [DeviceEntry]) async throws -> [CreatedDevice] {
        guard (1...DeviceImport.maximumDevices).contains(entries.count) else {
            throw CloudAPIError.formInvalid(detail: "1 to \(DeviceImport.maximumDevices) devices at a time")
        }
        var known: Set<String> = []
        var names: Set<String> = []
        var macs: Set<String> = []
        var rows: [(credentials: DeviceCredentials, mac: String?)] = []
        rows.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            func invalid(_ detail: String) -> CloudAPIError {
                .formInvalid(detail: entries.count == 1 ? detail : "device \(index + 1) (\(entry.name)): \(detail)")
            }
            if !known.contains(entry.productKey) {
                guard try await ProductStore(database).find(entry.productKey) != nil else {
                    throw CloudAPIError.productKeyInvalid(
                        detail: entries.count == 1 ? "no product has this key" : "device \(index + 1): no product \(entry.productKey)")
                }
                known.insert(entry.productKey)
            }
            guard (1...64).contains(entry.name.count), entry.name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_@.:".contains($0)) }) else {
                throw invalid("a device name has 1 to 64 of the characters A-Z a-z 0-9 - _ @ . :")
            }
            guard names.insert(entry.productKey + "/" + entry.name).inserted else { throw invalid("the name is given twice") }
            var mac: String?
            if let given = entry.mac {
                do { mac = try Validation.mac(given) } catch { throw invalid(error.detail) }
                guard macs.insert(entry.productKey + "/" + mac!).inserted else { throw invalid("the MAC is given twice") }
            }
            var credentials = DeviceCredentials.new(productKey: entry.productKey, deviceName: entry.name)
            if let secret = entry.secret {
                guard (16...64).contains(secret.count), secret.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                    throw invalid("a device secret has 16 to 64 letters and digits")
                }
                credentials.deviceSecret = secret
            }
            rows.append((credentials, mac))
        }
        let now = Clock.unixNow()
        let byProduct = Dictionary(grouping: rows, by: \.credentials.productKey)
        try await database.transaction { [rows] transaction in
            let store = DeviceStore(transaction)
            for (productKey, mine) in byProduct {
                let taken = try await store.existing(productKey: productKey, names: mine.map(\.credentials.deviceName), macs: mine.compactMap(\.mac))
                guard taken.isEmpty else {
                    let listed = taken.prefix(5).joined(separator: ", ") + (taken.count > 5 ? " and \(taken.count - 5) more" : "")
                    throw CloudAPIError.macAlreadyRegistered(detail: "product \(productKey) already has a device named or with the MAC \(listed)")
                }
            }
            do {
                try await store.insert(rows, at: now)
            } catch let error as StorageError where error.kind == .uniqueViolation {
                throw CloudAPIError.macAlreadyRegistered(detail: "this product already has a device with this name or MAC")
            }
        }
        return rows.map { row in
            CreatedDevice(
                did: row.credentials.did, productKey: row.credentials.productKey, deviceName: row.credentials.deviceName,
                deviceSecret: row.credentials.deviceSecret, passcode: row.credentials.passcode, mac: row.mac)
        }
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

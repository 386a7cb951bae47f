public import TetherCloudProtocol
import TetherCore

/// Firmware upgrades: offered to one device by a user bound to it, or to many by an
/// administrator's job. Each is a command of kind `ota` in the ledger, queued until the device's
/// node offers it (at once if it is connected, else when it connects); the device's reports
/// move it on (``DeviceFirmwareLink``). One upgrade per module of a device at a time.
public struct FirmwareUpgrades: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus

    /// How long an offer stays open unless the caller says otherwise.
    public static let defaultLifetime: Int64 = 86_400
    /// The longest (the lifetime of a download URL).
    public static let maximumLifetime = FirmwareDownloads.maximumLifetime
    /// Upgrades listed per device.
    static let listed = 20

    public init(database: any SQLDatabase, bus: any ClusterBus) {
        self.database = database
        self.bus = bus
    }

    /// What a device runs, the packages of its product and its upgrades, for a user bound to it.
    func overview(_ user: AuthenticatedUser, did: String) async throws -> DeviceFirmwareBody {
        let device = try await DeviceAccess(database: database).readable(by: user, did: did)
        let store = UpgradeStore(database)
        return DeviceFirmwareBody(
            did: did,
            modules: try await store.versions(did: did).map { DeviceFirmwareBody.Module(module: $0.module, version: $0.version, updatedAt: $0.updatedMs) },
            packages: try await FirmwareStore(database).list(productKey: device.productKey).map(\.body),
            upgrades: try await store.upgrades(did: did, limit: Self.listed).compactMap(\.upgrade))
    }

    /// Offers package `request.firmwareID` to a device, for a user bound to it other than a guest.
    func start(_ user: AuthenticatedUser, did: String, _ request: FirmwareUpgradeRequestBody) async throws -> CommandRecord {
        let device = try await DeviceAccess(database: database).controllable(by: user, did: did)
        let role = try await BindingStore(database).roles(of: did).first { $0.uid == user.uid }?.role
        guard role != .guest else { throw CloudAPIError.upgradeNotAllowed(detail: "a guest of device \(did) cannot upgrade its firmware") }
        guard let package = try await FirmwareStore(database).find(request.firmwareID), package.productKey == device.productKey else {
            throw CloudAPIError.notFound(detail: "no firmware package \(request.firmwareID) of product \(device.productKey)")
        }
        let store = UpgradeStore(database)
        if let running = try await store.versions(did: did).first(where: { $0.module == package.module }), running.version == package.version {
            throw CloudAPIError.formInvalid(detail: "device \(did) already runs \(package.module) version \(package.version)")
        }
        guard try await store.unfinished(did: did).allSatisfy({ $0.upgrade?.module != package.module }) else {
            throw CloudAPIError.upgradeInProgress(detail: "device \(did) already has an upgrade of \(package.module) under way")
        }
        let now = Clock.unixMilliseconds()
        let record = try await CommandLedger(database: database).insert(
            did: did, uid: user.uid, appID: user.appID, kind: .ota, body: Self.body(package), state: .queued,
            queueUntilMs: now + (request.ttl ?? Self.defaultLifetime) * 1000)
        await announce([record])
        return record
    }

    /// What an administrator's job did: the job and the devices it offered the package to, and
    /// those it left out (already running the version, or upgrading that module).
    public struct JobStarted: Sendable {
        public var jobID: Int64
        public var offered: [String]
        public var skipped: [(did: String, reason: String)]
    }

    /// Offers package `firmwareID` to the given devices of its product, or to all of them (nil).
    public func startJob(firmwareID: Int64, dids: [String]? = nil, lifetime: Int64 = FirmwareUpgrades.defaultLifetime) async throws -> JobStarted {
        guard (60...Self.maximumLifetime).contains(lifetime) else {
            throw CloudAPIError.formInvalid(detail: "an upgrade job lasts 60 to \(Self.maximumLifetime) seconds")
        }
        guard let package = try await FirmwareStore(database).find(firmwareID) else {
            throw CloudAPIError.notFound(detail: "no firmware package \(firmwareID)")
        }
        let store = UpgradeStore(database)
        let productDevices = try await store.devices(productKey: package.productKey)
        let targets = dids ?? productDevices
        let known = Set(productDevices)
        let versions = try await store.versions(productKey: package.productKey, module: package.module)
        let upgrading = try await store.devicesUpgrading(productKey: package.productKey)
        let now = Clock.unixMilliseconds()
        let body = Self.body(package)
        var offered: [String] = []
        var skipped: [(did: String, reason: String)] = []
        for did in targets {
            if !known.contains(did) {
                skipped.append((did, "not a device of product \(package.productKey)"))
            } else if versions[did] == package.version {
                skipped.append((did, "already runs \(package.version)"))
            } else if upgrading[did, default: []].contains(where: { $0.upgrade?.module == package.module }) {
                skipped.append((did, "an upgrade of \(package.module) is under way"))
            } else {
                offered.append(did)
            }
        }
        let chosen = offered
        let ledger = CommandLedger(database: database)
        let (jobID, records) = try await database.transaction { transaction in
            let jobID = try await UpgradeStore(transaction).insertJob(
                firmwareID: firmwareID, productKey: package.productKey, atMs: now, deadlineMs: now + lifetime * 1000)
            var records: [CommandRecord] = []
            for did in chosen {
                records.append(
                    try await ledger.insert(
                        did: did, uid: "", appID: "", kind: .ota, body: body, state: .queued, queueUntilMs: now + lifetime * 1000, jobID: jobID,
                        on: transaction))
            }
            return (jobID, records)
        }
        await announce(records)
        return JobStarted(jobID: jobID, offered: offered, skipped: skipped)
    }

    /// A job's upgrades, one per device.
    public func job(_ id: Int64) async throws -> [FirmwareUpgradeBody] {
        guard try await UpgradeStore(database).jobExists(id) else { throw CloudAPIError.notFound(detail: "no upgrade job \(id)") }
        return try await UpgradeStore(database).commands(job: id).compactMap(\.upgrade)
    }

    private func announce(_ records: [CommandRecord]) async {
        guard !records.isEmpty else { return }
        await bus.publish(
            records.flatMap { record -> [ClusterEvent] in
                [.command(record.update), .deliver(commandID: record.id, did: record.did)] + (record.upgrade.map { [.upgrade($0)] } ?? [])
            })
    }

    static func body(_ package: FirmwareRecord) -> JSONValue {
        ["firmware_id": .int(package.id), "version": .string(package.version), "module": .string(package.module)]
    }
}

extension FirmwareRecord {
    var body: FirmwarePackageBody {
        FirmwarePackageBody(id: id, module: module, version: version, size: size, sha256: sha256, md5: md5, createdAt: createdAt)
    }
}

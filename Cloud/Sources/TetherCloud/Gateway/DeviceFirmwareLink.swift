import Logging
import NIOCore
import Synchronization
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT

/// The device's side of OTA on the node that holds its connection: offers upgrades on
/// `/ota/device/upgrade/{pk}/{dn}` (with a signed download URL valid until the upgrade's
/// deadline), answers `thing/ota/firmware/get`, and moves each upgrade in the ledger by what the
/// device reports: progress on `/ota/device/progress` (acknowledged, or failed at a negative
/// step), the new version on `/ota/device/inform` (applied). Only an upgrade of the reporting
/// device moves: the broker has already confined each device to its own topics.
final class DeviceFirmwareLink: Sendable {
    let broker: MQTTBroker
    let database: any SQLDatabase
    let ledger: CommandLedger
    let history: DeviceHistory
    let bus: any ClusterBus
    let publicAddress: PublicAddress
    let logger: Logger
    /// Upgrades being offered now: a device that connects as the periodic look finds its queued
    /// upgrade is offered it once.
    private let offering = Mutex<Set<Int64>>([])

    init(
        broker: MQTTBroker, database: any SQLDatabase, ledger: CommandLedger, history: DeviceHistory, bus: any ClusterBus, publicAddress: PublicAddress,
        logger: Logger
    ) {
        self.broker = broker
        self.database = database
        self.ledger = ledger
        self.history = history
        self.bus = bus
        self.publicAddress = publicAddress
        self.logger = logger
    }

    /// Offers an upgrade from the ledger to its device, connected as `clientID`.
    func offer(_ command: CommandRecord, to device: AlinkDeviceIdentity, clientID: String) async throws {
        guard offering.withLock({ $0.insert(command.id).inserted }) else { return }
        defer { _ = offering.withLock { $0.remove(command.id) } }
        guard try await ledger.find(command.id)?.state == .queued, let notice = try await notice(for: command) else { return }
        let message = MQTTMessage(
            topic: AlinkDeviceTopic(device: device, topic: .firmwareUpgrade).name, payload: ByteBuffer(bytes: notice.bytes), qos: .atLeastOnce)
        guard broker.send(message, toClientID: clientID) else { return }
        try await moved(ledger.move(command.id, from: [.queued], to: .sent))
    }

    /// `/ota/device/inform`: the version is recorded; an upgrade to it is applied.
    func inform(_ bytes: some Collection<UInt8>, did: String) async throws {
        let report = try FirmwareVersionReport(parsing: bytes)
        let now = Clock.unixMilliseconds()
        try await UpgradeStore(database).setVersion(did: did, module: report.module, version: report.version, atMs: now)
        for upgrade in try await UpgradeStore(database).unfinished(did: did) where upgrade.upgrade?.module == report.module {
            if upgrade.upgrade?.version == report.version {
                try await moved(ledger.move(upgrade.id, did: did, from: [.queued, .sent, .acknowledged], to: .applied, code: 200, message: "upgraded"))
            } else if upgrade.state != .queued {
                // The device restarted on another version before reporting this one: the upgrade did not take.
                logger.info("a device reported another version during an upgrade", metadata: ["did": "\(did)", "version": "\(report.version)"])
            }
        }
        try await history.log(
            did: did, kind: .deviceToApp, atMs: now, body: ["firmware": .string(report.version), "module": .string(report.module)], source: "ota")
    }

    /// `/ota/device/progress`: the upgrade of that module moves on, or fails.
    func progress(_ bytes: some Collection<UInt8>, did: String) async throws {
        let report = try FirmwareProgressReport(parsing: bytes)
        guard let upgrade = try await UpgradeStore(database).unfinished(did: did).first(where: { $0.upgrade?.module == report.module }) else {
            logger.debug("upgrade progress nobody waits for", metadata: ["did": "\(did)", "step": "\(report.step)"])
            return
        }
        var body = upgrade.body.objectValue ?? [:]
        body["step"] = .int(Int64(report.step))
        body["desc"] = .string(report.desc)
        if let failure = report.failure {
            let message = report.desc.isEmpty ? failure.summary : "\(failure.summary): \(report.desc)"
            try await moved(
                ledger.move(upgrade.id, did: did, from: [.queued, .sent, .acknowledged], to: .failed, code: report.step, message: message, body: .object(body)))
        } else {
            try await moved(ledger.move(upgrade.id, did: did, from: [.sent, .acknowledged], to: .acknowledged, body: .object(body)))
        }
    }

    /// `thing/ota/firmware/get`: the waiting upgrade's notice as the reply's `data`, `{}` for none.
    func query(_ bytes: some Collection<UInt8>, did: String) async throws -> AlinkReply {
        let query = try FirmwareQuery(parsing: bytes)
        let request = AlinkRequest(id: query.id, method: "thing.ota.firmware.get", params: .object([:]))
        let waiting = try await UpgradeStore(database).unfinished(did: did).first { query.module == nil || $0.upgrade?.module == query.module }
        guard let waiting, let notice = try await notice(for: waiting) else { return request.reply() }
        try await moved(ledger.move(waiting.id, did: did, from: [.queued], to: .sent))
        return request.reply(data: notice.data)
    }

    /// The notice of an upgrade, with a download URL valid until its deadline; nil (and the
    /// upgrade failed) when its package is gone.
    private func notice(for command: CommandRecord) async throws -> FirmwareUpgradeNotice? {
        guard let upgrade = command.upgrade, let package = try await FirmwareStore(database).find(upgrade.firmwareID) else {
            try await moved(ledger.move(command.id, from: [.queued, .sent, .acknowledged], to: .failed, message: "the firmware package was deleted"))
            return nil
        }
        let now = Clock.unixNow()
        let expires = min((command.queueUntilMs ?? 0) / 1000, now + FirmwareDownloads.maximumLifetime)
        let query = try await FirmwareDownloads(database: database).query(id: package.id, expires: max(expires, now + 60))
        var base = publicAddress.current
        while base.hasSuffix("/") { base.removeLast() }
        return FirmwareUpgradeNotice(
            id: command.alinkID, url: "\(base)/ota/firmware/\(package.id)?\(query)", version: package.version, size: package.size, signMethod: .sha256,
            sign: package.sha256, md5: package.md5, module: package.module)
    }

    /// An upgrade that moved: the ledger's watchers and the device's apps hear of it.
    private func moved(_ record: CommandRecord?) async throws {
        guard let record else { return }
        var events: [ClusterEvent] = [.command(record.update)]
        if let upgrade = record.upgrade { events.append(.upgrade(upgrade)) }
        await bus.publish(events)
    }
}

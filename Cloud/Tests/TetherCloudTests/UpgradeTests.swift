import Foundation
import HTTPTypes
import NIOCore
import Testing
import TetherAgent
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// Firmware upgrades end to end: a package offered by a user or an administrator's job, the
/// Alink OTA topics, the device's download by signed URL (resumed after a drop), its progress
/// and result in the ledger and pushed to apps, and who may do what.
@Suite("OTA upgrades through the gateway, the REST API and the agent", .timeLimit(.minutes(3)))
struct UpgradeTests {
    static func package(_ count: Int, seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ Int(seed) &+ $0 >> 9) } }

    static func start(_ cloud: CloudHarness, _ did: String, token: String, firmwareID: Int64, ttl: Int64? = nil) async throws -> APIResponse {
        try await cloud.call(.post, "/app/devices/\(did)/firmware/upgrade", token: token, json: FirmwareUpgradeRequestBody(firmwareID: firmwareID, ttl: ttl).json)
    }

    static func firmware(_ cloud: CloudHarness, _ did: String, token: String) async throws -> DeviceFirmwareBody {
        let answer = try await cloud.call(.get, "/app/devices/\(did)/firmware", token: token)
        return try DeviceFirmwareBody(json: try #require(answer.json, "\(answer.text)"))
    }

    static func virtualDevice(version: String) throws -> VirtualDevice {
        let model = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))
        var generator = SplitMix64(seed: 11)
        var identity = DeviceIdentity.random(productKey: model.productKey, using: &generator)
        identity.firmwareVersion = version
        return try VirtualDevice(model: model, identity: identity)
    }

    @Test("a user upgrades a virtual device: offered, downloaded with progress, verified, installed, applied, pushed to the app", arguments: TestEngine.allCases)
    func upgradeOne(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (product, created, user) = try await GatewayFixtures.boundLamp(cloud)
            let bytes = Self.package(300_000, seed: 1)
            let package = try await cloud.admin.addFirmware(productKey: product.productKey, module: "default", version: "2.0.0", bytes: bytes)
            let device = try Self.virtualDevice(version: "1.0.0")
            let link = CloudLink(device: device, configuration: try GatewayFixtures.configuration(cloud, created), logger: GatewayFixtures.quietLogger)
            try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                _ = try await app.subscribeResult()
                let linked = Task { await link.run() }
                defer { linked.cancel() }
                try await GatewayFixtures.waitUntil("the device reports its version") {
                    try await Self.firmware(cloud, created.did, token: user.token).modules.map { "\($0.module) \($0.version)" } == ["default 1.0.0"]
                }
                let overview = try await Self.firmware(cloud, created.did, token: user.token)
                #expect(overview.packages.map(\.id) == [package.id] && overview.packages.first?.sha256 == package.sha256 && overview.upgrades.isEmpty)

                let started = try await Self.start(cloud, created.did, token: user.token, firmwareID: package.id)
                let accepted = try CommandAcceptedBody(json: try #require(started.json, "\(started.text)"))
                #expect(accepted.state == "queued")
                let applied = try await GatewayFixtures.waitForCommand(cloud, accepted.commandID, state: .applied, timeout: .seconds(30))
                #expect(applied.code == 200 && applied.upgrade?.step == 100)
                #expect(device.firmwareVersion == "2.0.0")

                // The app saw it move: offered, progress rising, installed, applied.
                try await GatewayFixtures.waitUntil("the app has the applied frame") {
                    app.pending("s2c_upgrade").contains { if case .upgrade(let u) = $0 { u.state == "applied" } else { false } }
                }
                let pushed = app.pending("s2c_upgrade").compactMap { frame -> FirmwareUpgradeBody? in if case .upgrade(let u) = frame { u } else { nil } }
                #expect(pushed.allSatisfy { $0.commandID == accepted.commandID && $0.version == "2.0.0" && $0.did == created.did })
                #expect(pushed.map(\.state).first == "queued" && pushed.map(\.state).contains("sent") && pushed.last?.state == "applied")
                let steps = pushed.compactMap(\.step)
                #expect(steps.count >= 3 && steps == steps.sorted() && steps.last == 100, "\(steps)")

                let after = try await Self.firmware(cloud, created.did, token: user.token)
                #expect(after.modules.map(\.version) == ["2.0.0"] && after.upgrades.first?.state == "applied")
                let ledger = try await cloud.call(.get, "/app/commands/\(accepted.commandID)", token: user.token)
                let entry = try CommandBody(json: try #require(ledger.json))
                #expect(entry.kind == .ota && entry.state == "applied" && entry.upgrade?.firmwareID == package.id)
                // Offering what it runs already is refused.
                #expect(try await Self.start(cloud, created.did, token: user.token, firmwareID: package.id).errorCode == 9015)
            }
        }
    }

    @Test("a package that does not verify fails at step -3; a download that drops resumes by Range and completes")
    func injectedFaults() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let corrupt = try await GatewayFixtures.device(cloud, product: product)
            let dropping = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [corrupt, dropping])
            let package = try await cloud.admin.addFirmware(productKey: product.productKey, module: "default", version: "3.1", bytes: Self.package(200_000, seed: 2))
            let corruptDevice = try Self.virtualDevice(version: "3.0")
            let droppingDevice = try Self.virtualDevice(version: "3.0")
            let links = [
                CloudLink(
                    device: corruptDevice, configuration: try GatewayFixtures.configuration(cloud, corrupt), firmwareFaults: FirmwareFaults(badChecksum: true),
                    logger: GatewayFixtures.quietLogger),
                CloudLink(
                    device: droppingDevice, configuration: try GatewayFixtures.configuration(cloud, dropping), firmwareFaults: FirmwareFaults(interruptAt: 0.5),
                    logger: GatewayFixtures.quietLogger),
            ]
            let events = droppingDevice.events.subscribe()
            let running = links.map { link in Task { await link.run() } }
            defer { running.forEach { $0.cancel() } }
            let first = try CommandAcceptedBody(json: try #require(try await Self.start(cloud, corrupt.did, token: user.token, firmwareID: package.id).json))
            let second = try CommandAcceptedBody(json: try #require(try await Self.start(cloud, dropping.did, token: user.token, firmwareID: package.id).json))
            let failed = try await GatewayFixtures.waitForCommand(cloud, first.commandID, state: .failed, timeout: .seconds(30))
            #expect(failed.code == -3 && failed.message.hasPrefix("the package did not verify") && corruptDevice.firmwareVersion == "3.0")
            _ = try await GatewayFixtures.waitForCommand(cloud, second.commandID, state: .applied, timeout: .seconds(30))
            #expect(droppingDevice.firmwareVersion == "3.1")
            // A failed upgrade may be offered again.
            #expect(try await Self.start(cloud, corrupt.did, token: user.token, firmwareID: package.id).status == .ok)
            var started = 0
            for await event in events {
                if case .upgradeStarted = event { started += 1 }
                if case .upgraded = event { break }
            }
            #expect(started == 1, "one download, resumed, not started over")
        }
    }

    @Test("offline devices get a job's upgrade when they connect; a device may pull it, download it by ranges, fail or finish; deadlines expire")
    func jobsPullAndDeadlines() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let current = try await GatewayFixtures.device(cloud, product: product, name: "current")
            let pushed = try await GatewayFixtures.device(cloud, product: product, name: "pushed")
            let pulling = try await GatewayFixtures.device(cloud, product: product, name: "pulling")
            let bytes = Self.package(150_000, seed: 3)
            let package = try await cloud.admin.addFirmware(productKey: product.productKey, module: "default", version: "5", bytes: bytes)
            try await GatewayFixtures.withDevice(cloud, current) { client in
                try await client.reportFirmwareVersion("5")
                try await GatewayFixtures.waitUntil("the version is recorded") {
                    try await UpgradeStore(cloud.database).versions(did: current.did).first?.version == "5"
                }
            }
            let job = try await cloud.admin.startUpgradeJob(firmwareID: package.id, dids: nil, lifetime: 600)
            #expect(Set(job.offered) == [pushed.did, pulling.did] && job.skipped.map(\.did) == [current.did])
            let other = try await cloud.admin.startUpgradeJob(firmwareID: package.id, dids: [pushed.did, "nope"], lifetime: 600)
            #expect(other.offered.isEmpty && Set(other.skipped.map(\.did)) == [pushed.did, "nope"])

            // The device connects: the queued upgrade is offered, with a working signed URL.
            try await GatewayFixtures.withDevice(cloud, pushed) { client in
                let downlinks = client.downlinks()
                try await client.reportFirmwareVersion("4")
                let offer = try await GatewayFixtures.nextDownlink(downlinks)
                #expect(offer.topic.topic == .firmwareUpgrade)
                let notice = try #require(try FirmwareUpgradeNotice(parsing: offer.payload.readableBytesView))
                #expect(notice.version == "5" && notice.size == 150_000 && notice.sign == package.sha256 && notice.md5 == package.md5)
                #expect(notice.url.hasPrefix("http://127.0.0.1:\(cloud.httpPort)/ota/firmware/\(package.id)?expires="))
                let command = try #require(try await UpgradeStore(cloud.database).unfinished(did: pushed.did).first)
                #expect(command.state == .sent)
                try await client.reportUpgradeProgress(step: 50, desc: "half")
                let progressing = try await GatewayFixtures.waitForCommand(cloud, command.id, state: .acknowledged)
                #expect(progressing.upgrade?.step == 50 && progressing.upgrade?.desc == "half")
                try await client.reportUpgradeProgress(step: -2, desc: "no space")
                let failed = try await GatewayFixtures.waitForCommand(cloud, command.id, state: .failed)
                #expect(failed.code == -2 && failed.message == "the download failed: no space")
            }

            // This one asks, downloads in two pieces (the first connection drops), verifies, reports.
            try await GatewayFixtures.withDevice(cloud, pulling) { client in
                let notice = try #require(try await client.queryFirmware())
                #expect(notice.version == "5" && notice.module == "default")
                var received: [UInt8] = []
                var dropped = false
                try await FirmwareDownloader(timeout: .seconds(10), logger: GatewayFixtures.quietLogger).download(notice) { piece in
                    if !dropped, received.count > 40_000 {
                        dropped = true
                        throw TetherError(.downloadFailed, "dropped on purpose")
                    }
                    received += Array(piece.readableBytesView)
                }
                #expect(dropped && received == bytes)
                try await client.reportFirmwareVersion("5")
                let done = try #require(try await UpgradeStore(cloud.database).commands(job: job.jobID).first { $0.did == pulling.did })
                _ = try await GatewayFixtures.waitForCommand(cloud, done.id, state: .applied)
                #expect(try await client.queryFirmware() == nil, "nothing is waiting any more")
                // A wrong digest is caught.
                var wrong = notice
                wrong.sign = String(repeating: "0", count: 64)
                await #expect(throws: TetherError.self) { try await FirmwareDownloader().download(wrong) { _ in } }
            }
            let states = try await cloud.admin.upgradeJob(job.jobID).map { "\($0.did):\($0.state)" }.sorted()
            #expect(states == ["\(pulling.did):applied", "\(pushed.did):failed"].sorted())

            // An offer the device never finishes expires at its deadline.
            let user = try await GatewayFixtures.user(cloud, boundTo: [pushed])
            let late = try CommandAcceptedBody(json: try #require(try await Self.start(cloud, pushed.did, token: user.token, firmwareID: package.id, ttl: 60).json))
            let expired = try await CommandLedger(database: cloud.database).expire(now: Clock.unixMilliseconds() + 61_000, answerTimeoutMs: 120_000)
            #expect(expired.map(\.id).contains(late.commandID))
            #expect(try await CommandLedger(database: cloud.database).find(late.commandID)?.state == .expired)
        }
    }

    @Test("a stranger and an unbound user get 9017, a guest may look but not upgrade (9503), a logged-out user 9004; one upgrade per module (9504)")
    func rights() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (product, device, owner) = try await GatewayFixtures.boundLamp(cloud)
            let package = try await cloud.admin.addFirmware(productKey: product.productKey, module: "default", version: "9", bytes: [1, 2, 3])
            let otherProduct = try await cloud.admin.createProduct(name: "Other", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl)
            let foreign = try await cloud.admin.addFirmware(productKey: otherProduct.productKey, module: "default", version: "9", bytes: [1])
            let (stranger, guest, leaving) = try await GatewayFixtures.outsiders(cloud, of: device)
            let unbound = try await GatewayFixtures.user(cloud, boundTo: [device])
            #expect(try await cloud.call(.delete, "/app/bindings", token: unbound.token, json: ["devices": [["did": .string(device.did)]]]).status == .ok)
            for (name, token, code): (String, String, Int64) in [("stranger", stranger.token, 9017), ("logged out", leaving.token, 9004), ("unbound", unbound.token, 9017)] {
                #expect(try await cloud.call(.get, "/app/devices/\(device.did)/firmware", token: token).errorCode == code, "\(name) read")
                #expect(try await Self.start(cloud, device.did, token: token, firmwareID: package.id).errorCode == code, "\(name) upgrade")
            }
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)/firmware", token: guest.token).status == .ok)
            let refused = try await Self.start(cloud, device.did, token: guest.token, firmwareID: package.id)
            #expect(refused.errorCode == 9503 && refused.status == .forbidden)
            #expect(try await Self.start(cloud, device.did, token: owner.token, firmwareID: foreign.id).errorCode == 9999)
            #expect(try await Self.start(cloud, device.did, token: owner.token, firmwareID: 999_999).errorCode == 9999)
            #expect(try await Self.start(cloud, device.did, token: owner.token, firmwareID: package.id, ttl: 10).errorCode == 9015)
            // The device is offline: the upgrade waits, and a second one of the same module is refused.
            #expect(try await Self.start(cloud, device.did, token: owner.token, firmwareID: package.id).status == .ok)
            let again = try await Self.start(cloud, device.did, token: owner.token, firmwareID: package.id)
            #expect(again.errorCode == 9504 && again.status == .conflict)
            #expect(try await Self.firmware(cloud, device.did, token: guest.token).upgrades.map(\.state) == ["queued"])
        }
    }

    @Test("a device can neither watch another device's upgrades nor move them, nor offer itself one")
    func confinement() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let victim = try await GatewayFixtures.device(cloud, product: product, name: "victim")
            let intruder = try await GatewayFixtures.device(cloud, product: product, name: "intruder")
            let owner = try await GatewayFixtures.user(cloud, boundTo: [victim])
            let package = try await cloud.admin.addFirmware(productKey: product.productKey, module: "default", version: "7", bytes: [7])
            let command = try CommandAcceptedBody(json: try #require(try await Self.start(cloud, victim.did, token: owner.token, firmwareID: package.id).json))
            try await GatewayFixtures.withDevice(cloud, intruder) { client in
                let watch = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/ota/device/upgrade/\(product.productKey)/victim", qos: .atLeastOnce)])
                #expect(watch.allSatisfy { $0.isFailure })
                #expect(try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/ota/#", qos: .atLeastOnce)]).allSatisfy { $0.isFailure })
                let own = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/ota/device/upgrade/\(product.productKey)/intruder", qos: .atLeastOnce)])
                #expect(!own.contains { $0.isFailure })
                for topic in ["/ota/device/progress/\(product.productKey)/victim", "/ota/device/inform/\(product.productKey)/victim"] {
                    let forged = topic.contains("progress") ? FirmwareProgressReport(step: -1, desc: "forged").bytes : FirmwareVersionReport(version: "7").bytes
                    try await client.mqtt.publish(MQTTMessage(topic: topic, payload: ByteBuffer(bytes: forged), qos: .atLeastOnce))
                }
                let notice = FirmwareUpgradeNotice(id: "1", url: "http://127.0.0.1:1/x", version: "8", size: 1, signMethod: .md5, sign: String(repeating: "0", count: 32))
                try await client.mqtt.publish(
                    MQTTMessage(topic: "/ota/device/upgrade/\(product.productKey)/intruder", payload: ByteBuffer(bytes: notice.bytes), qos: .atLeastOnce))
                // Its own topics still work after the forgeries, so they were handled (and refused) first.
                try await client.reportFirmwareVersion("1")
                try await GatewayFixtures.waitUntil("its own version is recorded") {
                    try await UpgradeStore(cloud.database).versions(did: intruder.did).first?.version == "1"
                }
            }
            #expect(try await CommandLedger(database: cloud.database).find(command.commandID)?.state == .queued)
            #expect(try await UpgradeStore(cloud.database).versions(did: victim.did).isEmpty)
        }
    }
}

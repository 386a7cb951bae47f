import Foundation
import HTTPTypes
import Logging
import NIOCore
import Synchronization
import Testing
import Tether
import TetherAgent
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherGizwitsLAN

@testable import TetherCloud

/// LAN grants end to end (README, "LAN grants"): the device receives the cloud's key when it
/// connects; owner and guest apps log in on the LAN with grants the SDK fetches and renews; a
/// stranger gets none; a revoked guest loses the cloud at once and the LAN when the grant lapses,
/// while the owner's connection carries on with renewed grants.
@Suite("LAN grants: cloud, SDK and device", .timeLimit(.minutes(2)))
struct LANGrantTests {
    /// Short enough that the test sees grants lapse and get renewed in real time, long enough
    /// that a renewal under a full parallel run on PostgreSQL comes before the expiry (3 s did not).
    static let lifetime: Int64 = 6

    @Test("owner and guest on the LAN with grants; the revoked guest loses the cloud at once and the LAN at the grant's expiry", arguments: TestEngine.allCases)
    func revocationReachesTheLAN(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, configure: { $0.lanGrantLifetimeSeconds = Self.lifetime }) { cloud in
            var model = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))
            let product = try await cloud.admin.createProduct(
                name: "Lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: true)
            model.productKey = product.productKey
            let created = try await GatewayFixtures.device(cloud, product: product)
            var generator = SplitMix64(seed: 7)
            var identity = DeviceIdentity.random(productKey: product.productKey, using: &generator)
            identity.did = created.did
            identity.passcode = created.passcode
            // Out of its binding window: only grants log in once it is activated.
            let lamp = try VirtualDevice(model: model, identity: identity, bindable: false)
            let refusals = Refusals()
            let watching = Task {
                for await event in lamp.events.subscribe() {
                    if case .clientRefused(_, let reason) = event { refusals.append(reason) }
                }
            }
            defer { watching.cancel() }
            let link = CloudLink(device: lamp, configuration: try GatewayFixtures.configuration(cloud, created), logger: GatewayFixtures.quietLogger)
            let linked = Task { await link.run() }
            defer { linked.cancel() }
            let server = LANDeviceServer(
                device: lamp, configuration: LANDeviceConfiguration(host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil)),
                logger: GatewayFixtures.quietLogger)
            let serving = Task { try await server.run() }
            defer { serving.cancel() }
            let addresses = try await server.addresses()
            // Generous: under a full parallel run on PostgreSQL the first connection can take a reconnect.
            try await GatewayFixtures.waitUntil(timeout: .seconds(45), "the device holds the cloud's grant key") { lamp.lanGrants.isActivated }

            // Owner, guest and stranger; the guest by invitation.
            let ownerName = "owner\(UInt32.random(in: 0...UInt32.max))"
            let owner = try await cloud.register(ownerName)
            let bound = try await cloud.call(
                .post, "/app/bindings", token: owner.token, json: ["devices": [["did": .string(created.did), "passcode": .string(created.passcode)]]])
            #expect(bound["success"] == [.string(created.did)])
            let guestName = "guest\(UInt32.random(in: 0...UInt32.max))"
            let guest = try await cloud.register(guestName)
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
            let invitation = try await GatewayFixtures.shareAccepted(cloud, did: created.did, from: owner, to: guest)

            // The cloud signs for bound users only; what it signs, the device verifies.
            #expect(try await cloud.call(.post, "/app/devices/\(created.did)/lan_grant", token: stranger.token).errorCode == 9017)
            let issued = try LANGrantBody(json: try #require(try await cloud.call(.post, "/app/devices/\(created.did)/lan_grant", token: guest.token).json))
            let verified = try LANGrantVerifier(keys: lamp.lanGrants.keys).verify(issued.grant, did: created.did, now: Int64(Date().timeIntervalSince1970))
                .get()
            #expect(verified.uid == guest.uid && verified.rights == [.read, .control] && issued.keyID == verified.keyID)
            #expect(issued.expiresAt - verified.issuedAt == Self.lifetime)

            // A stranger who learned the passcode gets nowhere on the LAN.
            let intruder = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort)
            #expect(try await intruder.request(.login(passcode: created.passcode)) == .loginResult(.grantRequired))
            await intruder.close()

            let configuration = try SDKControlTests.configuration(cloud, products: [model], discovery: addresses)
            try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { ownerApp in
                try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { guestApp in
                    try await ownerApp.account!.login(username: ownerName, password: "Passw0rd!")
                    try await guestApp.account!.login(username: guestName, password: "Passw0rd!")
                    let mine = try #require(await SDKDeviceListTests.list(ownerApp) { $0.contains { $0.did == created.did && $0.isOnLAN } }?.first)
                    let shared = try #require(await SDKDeviceListTests.list(guestApp) { $0.contains { $0.did == created.did && $0.isOnLAN } }?.first)
                    try await mine.subscribe()
                    try await shared.subscribe()
                    try await GatewayFixtures.waitUntil("both apps control the lamp on the LAN") { mine.controlPath == .lan && shared.controlPath == .lan }
                    #expect(try await mine.write(["Brightness": 20]).status?.data["Brightness"] == .int(20))
                    #expect(try await shared.write(["Brightness": 30]).status?.data["Brightness"] == .int(30))
                    #expect(refusals.reasons.contains { $0.contains("passcode alone") }, "the SDK tried the passcode first, then fetched a grant")

                    // Past the first grants' lifetime both connections still stand: renewed in place.
                    try await Task.sleep(for: .seconds(Self.lifetime + 1))
                    #expect(mine.controlPath == .lan && shared.controlPath == .lan)
                    #expect(!refusals.reasons.contains("the grant expired"), "\(refusals.reasons)")

                    // Revoked: no more grants, no more cloud; the LAN lasts until the held grant lapses.
                    #expect(try await cloud.call(.delete, "/app/sharing/\(invitation.id)", token: owner.token).status == .ok)
                    #expect(try await cloud.call(.post, "/app/devices/\(created.did)/lan_grant", token: guest.token).errorCode == 9017)
                    try await GatewayFixtures.waitUntil(timeout: .seconds(Self.lifetime * 4), "the device ends the revoked guest's session") {
                        refusals.reasons.contains("the grant expired")
                    }
                    try await GatewayFixtures.waitUntil("the guest's app is off the LAN") { shared.controlPath != .lan }
                    let refused = await #expect(throws: TetherError.self) { try await shared.write(["Brightness": 40]) }
                    #expect(refused != nil)
                    #expect(lamp.status.data["Brightness"] == .int(30))

                    // The owner never noticed.
                    #expect(mine.controlPath == .lan)
                    #expect(try await mine.write(["Brightness": 50]).status?.data["Brightness"] == .int(50))
                }
            }
        }
    }
}

/// The reasons the device gave for turning clients away.
private final class Refusals: Sendable {
    private let collected = Mutex<[String]>([])

    func append(_ reason: String) { collected.withLock { $0.append(reason) } }

    var reasons: [String] { collected.withLock { $0 } }
}

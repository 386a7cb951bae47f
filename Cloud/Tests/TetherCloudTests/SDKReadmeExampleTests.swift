import Foundation
import Logging
import Testing
import Tether
import TetherAgent
@testable import TetherCloud

/// The README's app example, run against a live cloud with a device bound to the user and
/// connected to the cloud only.
@Suite("The README's SDK app example", .timeLimit(.minutes(1)))
struct SDKReadmeExampleTests {
    @Test("log in, list devices, write a data point")
    func example() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await cloud.admin.createProduct(name: "Pet house", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
            var petHouse = try ThingModel(gizwitsJSON: try DeviceFixtures.petHouse())
            petHouse.productKey = product.productKey
            let created = try await cloud.admin.createDevice(productKey: product.productKey, name: "pet-house-1", mac: nil)
            _ = try await cloud.register("demo", password: "tether-demo-1")
            var generator = SplitMix64(seed: 3)
            var identity = DeviceIdentity.random(productKey: product.productKey, using: &generator)
            identity.did = created.did
            let virtual = try VirtualDevice(model: petHouse, identity: identity)
            let link = CloudLink(device: virtual, configuration: try GatewayFixtures.configuration(cloud, created), logger: GatewayFixtures.quietLogger)
            let linked = Task { await link.run() }
            defer { linked.cancel() }
            let api = TetherCloudAPI(endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID)
            let session = try await api.login(username: "demo", password: "tether-demo-1")
            #expect(try await api.bind(session, did: created.did, passcode: created.passcode))
            try await GatewayFixtures.waitUntil("the device is online in the cloud") { try await api.device(session, did: created.did).isOnline }
            let appID = cloud.app.appID
            let url = "http://127.0.0.1:\(cloud.httpPort)"

            // From here on, the README's code (a session store in memory instead of the default file,
            // and a discovery target nobody answers, to keep the test to loopback).
            var printed: [String] = []
            let cloudOptions = TetherClient.CloudOptions(endpoint: try CloudEndpoint(url: url), appID: appID, sessionStore: MemorySessionStore())
            let lan = LANConfiguration(discoveryTargets: [LANEndpoint(host: "127.0.0.1", port: 9)])
            try await withTetherClient(configuration: .init(products: [petHouse], lan: lan, cloud: cloudOptions)) { client in
                let account = client.account!
                if !account.isLoggedIn {
                    try await account.login(username: "demo", password: "tether-demo-1")
                }
                for await devices in client.deviceListUpdates() {
                    for device in devices { printed.append("\(device.did) \(device.reachability) \(device.isBound)") }
                    guard let device = devices.first(where: \.isBound) else { continue }
                    try await device.subscribe()
                    let result = try await device.write(["LED_OnOff": true])
                    printed.append("\(device.controlPath!) \(result.sn) \(result.status?.data["LED_OnOff"].map { "\($0)" } ?? "-")")
                    break
                }
            }
            #expect(printed.contains("\(created.did) cloud true"))
            #expect(printed.last?.hasPrefix("cloud ") == true)
            #expect(printed.last?.hasSuffix(" true") == true, "the write's status came back: \(printed)")
            #expect(virtual.status.data["LED_OnOff"] == .bool(true))
        }
    }
}

import Foundation
import Logging
import Testing
import Tether
import TetherAgent
@testable import TetherCloud

/// The SDK's device list over the LAN and the cloud at once: the same objects, merged by did or
/// MAC, with their reachability.
@Suite("SDK device list: LAN and cloud merged", .timeLimit(.minutes(1)))
struct SDKDeviceListTests {
    @Test("bound devices join the list; a LAN device bound in the cloud is the same object; unbinding removes cloud-only devices; product filter")
    func merged() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            // A pet house on the LAN (the agent), registered in the cloud by its MAC as GAgent does.
            let petHouse = try await cloud.admin.createProduct(name: "Pet house", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
            let model = try ThingModel(gizwitsJSON: try DeviceFixtures.petHouse())
            var generator = SplitMix64(seed: 11)
            var identity = DeviceIdentity.random(productKey: petHouse.productKey, using: &generator)
            let registered = try await DeviceFixtures.register(cloud, product: petHouse, mac: identity.macString)
            // The module announces on the LAN the did and passcode the cloud knows it by.
            identity.did = registered.did
            identity.passcode = registered.passcode
            let virtual = try VirtualDevice(model: model, identity: identity, bindable: true)
            // A lamp only the cloud reaches.
            let lampProduct = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await GatewayFixtures.device(cloud, product: lampProduct)
            let lampModel = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))

            let server = LANDeviceServer(
                device: virtual,
                configuration: LANDeviceConfiguration(host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil)),
                logger: GatewayFixtures.quietLogger
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                defer { group.cancelAll() }
                let addresses = try await server.addresses()
                var configuration = TetherClient.Configuration(
                    products: [model, lampModel],
                    lan: LANConfiguration(discoveryTargets: [LANEndpoint(host: addresses.host, port: addresses.udpPort)], discoveryInterval: .milliseconds(200), tcpPort: addresses.tcpPort),
                    cloud: .init(endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID, sessionStore: MemorySessionStore(), requestTimeout: .seconds(20))
                )
                configuration.products = [model, lampModel]
                try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { client in
                    let onLAN = try #require(await Self.list(client) { $0.count == 1 }).first!
                    #expect(onLAN.reachability == .lan)
                    #expect(!onLAN.isBound)

                    let account = try #require(client.account)
                    try await account.register(username: "lister", password: "Passw0rd!")
                    let session = try #require(account.session)
                    #expect(try await account.api.bind(session, did: registered.did, passcode: registered.passcode, alias: "pets"))
                    #expect(try await account.api.bind(session, did: lamp.did, passcode: lamp.passcode))
                    try await client.refreshBindings()
                    let both = try #require(await Self.list(client) { $0.count == 2 && $0.allSatisfy(\.isBound) })
                    #expect(both.first === onLAN, "the LAN device and the bound device are one object")
                    #expect(onLAN.alias == "pets")
                    #expect(onLAN.did == registered.did)
                    let cloudOnly = try #require(both.first { $0 !== onLAN })
                    #expect(cloudOnly.did == lamp.did)
                    #expect(cloudOnly.reachability == .none, "the lamp is not connected yet")

                    try await GatewayFixtures.withDevice(cloud, lamp) { _ in
                        try await client.refreshBindings()
                        #expect(cloudOnly.reachability == .cloud)
                        #expect(cloudOnly.netStatus == .online)
                    }
                    var lamps = client.deviceListUpdates(productKeys: [lampProduct.productKey]).makeAsyncIterator()
                    #expect(await lamps.next()?.map(\.did) == [lamp.did])

                    _ = try await account.api.unbind(session, dids: [lamp.did, registered.did])
                    try await client.refreshBindings()
                    let after = client.devices
                    #expect(after.count == 1 && after.first === onLAN, "the cloud-only lamp left; the LAN device stays, unbound")
                    #expect(!onLAN.isBound)
                }
            }
        }
    }

    /// The first device list that satisfies `condition`, within 5 s.
    static func list(_ client: TetherClient, _ condition: @escaping @Sendable ([Device]) -> Bool) async -> [Device]? {
        await withTaskGroup(of: [Device]?.self) { group in
            group.addTask {
                for await list in client.deviceListUpdates() where condition(list) { return list }
                return nil
            }
            group.addTask { try? await Task.sleep(for: .seconds(5)); return nil }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }
}

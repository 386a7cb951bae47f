import Foundation
import Logging
import Testing
import Tether
import TetherAgent
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// The device agent's cloud link: one virtual device reachable on the LAN and through the
/// cloud at once.
@Suite("Agent to cloud", .timeLimit(.minutes(1)))
struct AgentCloudTests {
    @Test("one device, two paths: the cloud's write reaches the LAN app, the LAN write reaches the cloud's app")
    func twoPaths() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let created = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [created])
            let model = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))
            var generator = SplitMix64(seed: 7)
            let device = try VirtualDevice(model: model, identity: .random(productKey: model.productKey, using: &generator), bindable: true)
            let lan = LANDeviceServer(
                device: device,
                configuration: LANDeviceConfiguration(host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil)),
                logger: GatewayFixtures.quietLogger
            )
            let link = CloudLink(device: device, configuration: try GatewayFixtures.configuration(cloud, created), logger: GatewayFixtures.quietLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await lan.run() }
                defer { group.cancelAll() }
                let addresses = try await lan.addresses()
                try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                    _ = try await app.subscribeResult()
                    let linked = Task { await link.run() }
                    defer { linked.cancel() }
                    // On connecting, the device reports its whole status.
                    let first = try await app.notification { $0.attrs["Brightness"] != nil }
                    #expect(first.attrs["LightSwitch"] == false)

                    try await app.send(.write(M2MWrite(sequence: .number(1), did: created.did, attrs: ["Brightness": 64])))
                    _ = try await app.writeAcknowledgement(answering: 1)
                    _ = try await app.notification(.answering(1))
                    #expect(device.status.data["Brightness"] == .int(64))

                    let lanConfiguration = LANConfiguration(discoveryEnabled: false, tcpPort: addresses.tcpPort, connectTimeout: .seconds(2), requestTimeout: .seconds(2))
                    try await withTetherClient(configuration: .init(products: [model], lan: lanConfiguration)) { client in
                        let lanDevice = client.device(host: addresses.host, port: addresses.tcpPort)
                        try await lanDevice.subscribe()
                        let status = try await lanDevice.getStatus()
                        #expect(status.data["Brightness"] == .int(64), "the LAN sees the cloud's write")
                        _ = try await lanDevice.write(["Brightness": 20, "LightSwitch": true])
                    }
                    let report = try await app.notification { $0.attrs["Brightness"] == 20 }
                    #expect(report.attrs["LightSwitch"] == true, "the cloud sees the LAN's write")
                }
            }
        }
    }
}

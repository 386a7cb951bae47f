import Testing
import Tether
import TetherAgent
import TetherTestSupport

@Suite("The README's SDK example", .timeLimit(.minutes(1)))
struct ReadmeExampleTests {
    @Test("discover, subscribe, write with literals and read an event, as the README shows")
    func example() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            let lan = LANConfiguration(discoveryTargets: [LANEndpoint(host: addresses.host, port: addresses.udpPort)], discoveryInterval: .milliseconds(200), tcpPort: addresses.tcpPort)
            let sn = try await withTetherClient(configuration: .init(products: [model], lan: lan)) { client -> UInt32 in
                for await devices in client.deviceListUpdates() {
                    guard let device = devices.first(where: { $0.productKey == model.productKey }) else { continue }
                    try await device.subscribe()
                    let events = device.events()
                    let result = try await device.write(["LED_OnOff": true, "LED_Color": "Purple"], sn: 5)
                    #expect(result.status?.data["LED_Color"] == 2)
                    for await event in events {
                        if case .status(let report) = event { return report.sn }
                    }
                }
                return 0
            }
            #expect(sn == 5)
            #expect(server.device.status.data["LED_OnOff"] == true)
        }
    }
}

import NIOCore
import Logging
import Testing
import TetherAgent
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

/// The agent's UDP side: announcements, discovery answers and SoftAP onboarding.
@Suite("Device agent on UDP", .timeLimit(.minutes(1)))
struct AgentUDPTests {
    /// Runs a device whose announcements go to `listener`.
    func withDevice(onboarding: Bool, announcingTo listener: UDPTestSocket, _ body: (LANDeviceServer, LANDeviceAddresses) async throws -> Void) async throws {
        var generator = SplitMix64(seed: 9)
        let model = ExampleProducts.petHouse
        let device = try VirtualDevice(model: model, identity: .random(productKey: model.productKey, using: &generator), onboarding: onboarding)
        let server = LANDeviceServer(
            device: device,
            configuration: LANDeviceConfiguration(
                host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: (host: "127.0.0.1", port: listener.port),
                announcementCount: 3, announcementInterval: .milliseconds(50)
            ),
            logger: Logger(label: "test")
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            // Cancel the server whatever the body does, so that a failing test fails instead of hanging.
            defer { group.cancelAll() }
            try await body(server, try await server.addresses())
        }
    }

    @Test("the device announces itself (0x0005) at start-up, 3 times here, and answers discovery to the sender")
    func announcementsAndDiscovery() async throws {
        let listener = try await UDPTestSocket()
        try await withDevice(onboarding: false, announcingTo: listener) { server, addresses in
            var announcements = 0
            var iterator = listener.messages.makeAsyncIterator()
            while announcements < 3, let (message, _) = await iterator.next() {
                guard case .announcement(let info) = message else { continue }
                #expect(info.did == server.device.identity.did && info.mac == server.device.identity.mac)
                announcements += 1
            }
            #expect(announcements == 3)
            try await listener.send(.discoveryRequest, to: "127.0.0.1", port: addresses.udpPort)
            while let (message, sender) = await iterator.next() {
                guard case .discoveryResponse(let info) = message else { continue }
                #expect(info.productKey == server.device.identity.productKey)
                #expect(sender.port == addresses.udpPort)
                break
            }
        }
        await listener.close()
    }

    @Test("in onboarding mode 0x0001 is acknowledged (0x0002), the device keeps the network and announces 0x0019")
    func softAPOnboarding() async throws {
        let listener = try await UDPTestSocket()
        try await withDevice(onboarding: true, announcingTo: listener) { server, addresses in
            let app = try await UDPTestSocket()
            try await app.send(.softAPConfiguration(ssid: "HomeWiFi", key: "secret123"), to: "127.0.0.1", port: addresses.udpPort)
            let ack = await next(app.messages) { $0.0 == .softAPConfigurationAck }
            #expect(ack != nil)
            #expect(server.device.configuredSSID == "HomeWiFi")
            #expect(!server.device.isOnboarding)
            let identity = server.device.identity
            let success = await next(listener.messages) { $0.0 == .configurationSuccess(mac: identity.mac, productKey: identity.productKey, did: identity.did) }
            #expect(success != nil)
            await app.close()
        }
        await listener.close()
    }

    @Test("outside onboarding mode 0x0001 is ignored; credentials longer than 32 bytes are acknowledged but not kept")
    func softAPRefusals() async throws {
        let listener = try await UDPTestSocket()
        try await withDevice(onboarding: false, announcingTo: listener) { server, addresses in
            let app = try await UDPTestSocket()
            try await app.send(.softAPConfiguration(ssid: "HomeWiFi", key: "secret123"), to: "127.0.0.1", port: addresses.udpPort)
            try await app.send(.discoveryRequest, to: "127.0.0.1", port: addresses.udpPort)
            // The discovery answer arrives; no acknowledgement came before it.
            let first = await next(app.messages) { _ in true }
            #expect(first.map { if case .discoveryResponse = $0.0 { true } else { false } } == true)
            #expect(server.device.configuredSSID == nil)
            await app.close()
        }
        try await withDevice(onboarding: true, announcingTo: listener) { server, addresses in
            let app = try await UDPTestSocket()
            try await app.send(.softAPConfiguration(ssid: String(repeating: "s", count: 33), key: "k"), to: "127.0.0.1", port: addresses.udpPort)
            #expect(await next(app.messages) { $0.0 == .softAPConfigurationAck } != nil)
            #expect(server.device.configuredSSID == nil && server.device.isOnboarding)
            await app.close()
        }
        await listener.close()
    }
}

import Logging
import Testing
import Tether
import TetherAgent
import TetherTestSupport

/// ESP-IDF provisioning from the SDK against the agent's device whose simulated router goes
/// wrong on purpose: each fault reaches the app as its own typed error at `joining_network`,
/// with a trace, and the device takes other credentials after it.
@Suite("ESP-IDF provisioning: the router's faults, SDK ↔ agent", .timeLimit(.minutes(1)))
struct ESPRouterFaultTests {
    static func withDevice(_ router: SimulatedRouter, _ body: (ESPProvisioningOptions, VirtualDevice) async throws -> Void) async throws {
        var generator = SplitMix64(seed: 15)
        let device = try VirtualDevice(model: try Fixtures.petHouse(), identity: .random(productKey: "pk", using: &generator), onboarding: true)
        let server = ESPProvisioningServer(
            device: device, configuration: ESPProvisioningConfiguration(host: "127.0.0.1", port: 0, security: 0, router: router),
            logger: Logger(label: "test.esp"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }
            var options = ESPProvisioningOptions(device: LANEndpoint(host: "127.0.0.1", port: try await server.port()), security: 0)
            options.pollInterval = .milliseconds(50)
            options.joinTimeout = .seconds(10)
            try await body(options, device)
        }
    }

    static let networks: [SimulatedRouter.Network] = [.init(ssid: "HomeNet", password: "correct horse"), .init(ssid: "Attic", password: "pw123456")]

    @Test(
        "refused association, no DHCP answer, a network gone since the scan, a wrong password: each its own code",
        arguments: [
            (SimulatedRouter.Faults(refuseJoin: true), "HomeNet", "correct horse", TetherError.Code.wifiJoinFailed),
            (SimulatedRouter.Faults(dhcpTimeout: true), "HomeNet", "correct horse", .noIPAddress),
            (SimulatedRouter.Faults(goneNetworks: ["Attic"]), "Attic", "pw123456", .wifiNetworkNotFound),
            (SimulatedRouter.Faults(), "HomeNet", "wrong horse", .wifiAuthenticationFailed),
        ])
    func faults(faults: SimulatedRouter.Faults, ssid: String, password: String, expected: TetherError.Code) async throws {
        try await Self.withDevice(SimulatedRouter(networks: Self.networks, faults: faults)) { options, device throws in
            // The scan still shows every network, as a real one taken before the fault would.
            #expect(try await ESPProvisioning.scan(options: options).count == 2)
            let failure = await #expect(throws: OnboardingFailure.self) {
                try await ESPProvisioning.run(ssid: Array(ssid.utf8), password: Array(password.utf8), options: options)
            }
            #expect(failure?.step == .joiningNetwork && failure?.error.code == expected)
            #expect(failure?.trace.entries.contains { $0.event == "reset" } == true, "the device was asked to forget the failed join")
            #expect(failure?.trace.json.serialized().contains(password) == false)
            #expect(device.isOnboarding)
        }
    }

    @Test("a slow join: \"connecting\" while the router takes its time, then connected")
    func slowJoin() async throws {
        try await Self.withDevice(SimulatedRouter(networks: Self.networks, faults: .init(joinDelay: .milliseconds(400)))) { options, device throws in
            let result = try await ESPProvisioning.run(ssid: Array("HomeNet".utf8), password: Array("correct horse".utf8), options: options)
            #expect(result.ip == "192.168.1.23")
            let states = result.trace.entries.filter { $0.event == "station" }.compactMap { $0.detail["state"]?.stringValue }
            #expect(states.first == "connecting" && states.last == "connected" && states.count >= 2)
            #expect(!device.isOnboarding && device.configuredSSID == "HomeNet")
        }
    }

    @Test("a DHCP timeout takes twice the join delay; the app's join timeout comes first when shorter")
    func joinTimeout() async throws {
        try await Self.withDevice(SimulatedRouter(networks: Self.networks, faults: .init(joinDelay: .seconds(5), dhcpTimeout: true))) { options, _ throws in
            var options = options
            options.joinTimeout = .milliseconds(300)
            let failure = await #expect(throws: OnboardingFailure.self) {
                try await ESPProvisioning.run(ssid: Array("HomeNet".utf8), password: Array("correct horse".utf8), options: options)
            }
            #expect(failure?.step == .joiningNetwork && failure?.error.code == .timeout)
        }
    }
}

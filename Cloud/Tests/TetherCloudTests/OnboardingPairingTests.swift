import Foundation
import Logging
import Synchronization
import Testing
import Tether
import TetherAgent
import TetherCore
@testable import TetherCloud

/// The SDK's onboarding session from the access point to the binding: the agent's device takes
/// the credentials and the pairing token (ESP-IDF's custom endpoint, GAgent's `0x0001`
/// extension), joins the simulated router, reaches the cloud's gateway and presents the token;
/// the SDK hears the outcome and has the device in its list.
@Suite("Onboarding with pairing: SDK → agent → cloud → SDK", .timeLimit(.minutes(2)))
struct OnboardingPairingTests {
    final class Steps: Sendable {
        private let steps = Mutex<[OnboardingStep]>([])
        func append(_ step: OnboardingStep) { steps.withLock { $0.append(step) } }
        var all: [OnboardingStep] { steps.withLock { $0 } }
    }

    /// A device of `created`'s identity waiting for credentials, with its cloud link.
    static func device(_ cloud: CloudHarness, _ created: Administration.CreatedDevice) throws -> (VirtualDevice, CloudLink) {
        let model = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))
        let identity = DeviceIdentity(did: created.did, mac: [0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01], passcode: "ABCDEFGHIJ", productKey: created.productKey)
        let device = try VirtualDevice(model: model, identity: identity, onboarding: true)
        return (device, CloudLink(device: device, configuration: try GatewayFixtures.configuration(cloud, created), logger: GatewayFixtures.quietLogger))
    }

    static func espServer(_ device: VirtualDevice, router: SimulatedRouter) -> ESPProvisioningServer {
        ESPProvisioningServer(
            device: device,
            configuration: ESPProvisioningConfiguration(host: "127.0.0.1", port: 0, security: 1, pop: Array("abcd1234".utf8), router: router),
            logger: GatewayFixtures.quietLogger)
    }

    /// Runs `body` with the port of an ESP-IDF device of `created`'s identity waiting for
    /// credentials, reaching the cloud once joined when `linked`.
    static func withESPDevice(
        _ cloud: CloudHarness, _ created: Administration.CreatedDevice, linked: Bool, _ body: (Int) async throws -> Void
    ) async throws {
        let (device, link) = try Self.device(cloud, created)
        let server = Self.espServer(device, router: Self.router)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            if linked { group.addTask { await link.run() } }
            defer { group.cancelAll() }
            try await body(try await server.port())
        }
    }

    static let router = SimulatedRouter(networks: [.init(ssid: "HomeNet", password: "correct horse")])

    static func espRequest(port: Int, pairing: OnboardingRequest.Pairing?, timeout: Duration = .seconds(20)) -> OnboardingRequest {
        var options = ESPProvisioningOptions(device: LANEndpoint(host: "127.0.0.1", port: port), security: 1, pop: "abcd1234")
        options.pollInterval = .milliseconds(100)
        return OnboardingRequest(
            mode: .espIDF(options), ssid: "HomeNet", password: "correct horse", pairing: pairing, pairingTimeout: timeout,
            pairingPollInterval: .milliseconds(300))
    }

    /// No secret in the trace: the password, the PoP, nor anything shaped like a token.
    static func expectNoSecrets(_ trace: OnboardingTrace, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = trace.json.serialized()
        #expect(!text.contains("correct horse") && !text.contains("abcd1234"), sourceLocation: sourceLocation)
        #expect(text.firstMatch(of: /[0-9a-f]{32}/) == nil, "a token-like string in the trace: \(text)", sourceLocation: sourceLocation)
    }

    @Test("ESP-IDF security 1: steps from the access point to the binding, the device in the list, the trace without secrets", arguments: TestEngine.allCases)
    func espToBinding(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let created = try await GatewayFixtures.device(cloud, product: product)
            let (device, link) = try Self.device(cloud, created)
            let server = Self.espServer(device, router: Self.router)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                group.addTask { await link.run() }
                defer { group.cancelAll() }
                let port = try await server.port()
                try await withTetherClient(configuration: SDKControlTests.configuration(cloud, products: []), logger: GatewayFixtures.quietLogger) { client in
                    try await client.account!.register(username: "onboarder\(UInt32.random(in: 0...UInt32.max))", password: "Passw0rd!")
                    let request = Self.espRequest(port: port, pairing: .init(productKey: product.productKey))
                    let (steps, result) = try await client.withOnboarding(request) { session in
                        var seen: [OnboardingStep] = []
                        for await step in session.steps { seen.append(step) }
                        return (seen, try await session.result())
                    }
                    #expect(
                        steps == [
                            .preparing, .connectingToDevice, .establishingSession, .sendingCredentials, .joiningNetwork, .activatedInCloud, .bound,
                        ])
                    #expect(result.did == created.did && result.productKey == product.productKey && result.ip == "192.168.1.23")
                    #expect(result.pairing?.state == .bound && result.pairing?.role != nil)
                    #expect(result.device?.did == created.did)
                    #expect(client.devices.map(\.did) == [created.did])
                    #expect(device.configuredSSID == "HomeNet" && !device.isOnboarding)
                    #expect(result.trace.outcome == "bound")
                    let events = result.trace.entries.map(\.event)
                    #expect(events.contains("pairing_token_issued") && events.contains("pairing_token_sent") && events.contains("mode_outcome"))
                    Self.expectNoSecrets(result.trace)
                }
            }
        }
    }

    @Test("GAgent SoftAP: the token after the key in 0x0001; the device bound once it joined")
    func softAPToBinding() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let created = try await GatewayFixtures.device(cloud, product: product)
            let (device, link) = try Self.device(cloud, created)
            var router = Self.router
            router.faults.joinDelay = .milliseconds(300)
            let lan = LANDeviceServer(
                device: device,
                configuration: LANDeviceConfiguration(host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil), router: router),
                logger: GatewayFixtures.quietLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await lan.run() }
                group.addTask { await link.run() }
                defer { group.cancelAll() }
                let addresses = try await lan.addresses()
                try await withTetherClient(configuration: SDKControlTests.configuration(cloud, products: []), logger: GatewayFixtures.quietLogger) { client in
                    try await client.account!.register(username: "softap\(UInt32.random(in: 0...UInt32.max))", password: "Passw0rd!")
                    let options = SoftAPOptions(
                        device: LANEndpoint(host: "127.0.0.1", port: addresses.udpPort), listenHost: "127.0.0.1", announcementPort: nil,
                        retryInterval: .milliseconds(200), answerTimeout: .seconds(5))
                    let steps = Steps()
                    let result = try await client.onboard(
                        OnboardingRequest(
                            mode: .softAP(options), ssid: "HomeNet", password: "correct horse", pairing: .init(), pairingTimeout: .seconds(20),
                            pairingPollInterval: .milliseconds(300))
                    ) { steps.append($0) }
                    #expect(steps.all == [.preparing, .sendingCredentials, .deviceAcknowledged, .activatedInCloud, .bound])
                    #expect(result.did == created.did && result.productKey == product.productKey && result.pairing?.state == .bound)
                    #expect(client.devices.map(\.did) == [created.did])
                    Self.expectNoSecrets(result.trace)
                }
            }
        }
    }

    @Test("refusals reach the app as typed errors at activated_in_cloud: another product's token, a device that never comes, a stop")
    func refusals() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let other = try await cloud.admin.createProduct(
                name: "Other", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: false)
            let created = try await GatewayFixtures.device(cloud, product: product)
            try await withTetherClient(configuration: SDKControlTests.configuration(cloud, products: []), logger: GatewayFixtures.quietLogger) { client in
                try await client.account!.register(username: "refused\(UInt32.random(in: 0...UInt32.max))", password: "Passw0rd!")
                // A token for another product: the device presents it and is refused (9516).
                try await Self.withESPDevice(cloud, created, linked: true) { port in
                    let request = Self.espRequest(port: port, pairing: .init(productKey: other.productKey))
                    let failure = await #expect(throws: OnboardingFailure.self) { try await client.onboard(request) }
                    #expect(failure?.step == .activatedInCloud && failure?.error.code == .pairingRefused && failure?.error.cloudCode == 9516)
                    #expect(failure?.trace.outcome == "failed")
                    if let trace = failure?.trace { Self.expectNoSecrets(trace) }
                }
                #expect(client.devices.isEmpty)
                // A device without a cloud link never presents the token: a timeout at that step.
                try await Self.withESPDevice(cloud, created, linked: false) { port in
                    let request = Self.espRequest(port: port, pairing: .init(), timeout: .seconds(1))
                    let failure = await #expect(throws: OnboardingFailure.self) { try await client.onboard(request) }
                    #expect(failure?.step == .activatedInCloud && failure?.error.code == .timeout)
                    // The app gave up: its token is ended in the cloud, so a device coming later is not bound.
                    let issued = failure?.trace.entries.first { $0.event == "pairing_token_issued" }?.detail["id"]?.stringValue
                    let id = try #require(issued)
                    #expect(failure?.trace.entries.contains { $0.event == "pairing_token_cancelled" && $0.detail["done"] == true } == true)
                    #expect(try await client.account!.pairingStatus(id: id).state == .expired)
                }
                // Stopped while waiting for the cloud: the session ends at once with `cancelled`.
                try await Self.withESPDevice(cloud, created, linked: false) { port in
                    let request = Self.espRequest(port: port, pairing: .init(), timeout: .seconds(60))
                    let failure = try await client.withOnboarding(request) { session -> OnboardingFailure? in
                        for await step in session.steps where step == .activatedInCloud { session.stop() }
                        do throws(OnboardingFailure) {
                            _ = try await session.result()
                            return nil
                        } catch {
                            return error
                        }
                    }
                    #expect(failure?.error.code == .cancelled && failure?.step == .activatedInCloud)
                }
            }
        }
    }
}

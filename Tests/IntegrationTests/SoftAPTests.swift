import Logging
import Synchronization
import Testing
import Tether
import TetherAgent
import TetherTestSupport

/// GAgent SoftAP onboarding on loopback: the SDK sends `0x0001` to the agent's device in SoftAP
/// mode, gets its `0x0002`, and hears its `0x0019` announcement once it has "joined" the router.
@Suite("SoftAP: SDK ↔ agent on loopback", .timeLimit(.minutes(1)))
struct SoftAPTests {
    static func server(onboarding: Bool, announceTo port: Int, webConfig: Bool = false) throws -> LANDeviceServer {
        let model = try Fixtures.petHouse()
        let identity = DeviceIdentity(
            did: "gKufzxZwYeyd3Skbsb6mza", mac: [0xac, 0xcf, 0x23, 0x50, 0xd4, 0x46], passcode: "ABCDEFGHIJ", productKey: model.productKey)
        let device = try VirtualDevice(model: model, identity: identity, onboarding: onboarding)
        let configuration = LANDeviceConfiguration(
            host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(("127.0.0.1", port)), webConfigPort: webConfig ? 0 : nil)
        return LANDeviceServer(device: device, configuration: configuration, logger: Logger(label: "test.softap"))
    }

    @Test("credentials taken, acknowledged, and the device announced on the router's network")
    func onboards() async throws {
        let announcements = freeUDPPort()
        let server = try Self.server(onboarding: true, announceTo: announcements)
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        let addresses = try await server.addresses()
        let options = SoftAPOptions(
            device: LANEndpoint(host: "127.0.0.1", port: addresses.udpPort), listenHost: "127.0.0.1", announcementPort: announcements,
            retryInterval: .milliseconds(200), answerTimeout: .seconds(5), announcementTimeout: .seconds(10))
        let steps = StepLog()
        let result = try await SoftAPOnboarding.run(ssid: "HomeNet", password: "correct horse", options: options) { steps.append($0) }
        #expect(server.device.configuredSSID == "HomeNet")
        #expect(result.did == "gKufzxZwYeyd3Skbsb6mza" && result.mac == "ac:cf:23:50:d4:46" && result.ip == "127.0.0.1")
        #expect(steps.all == [.preparing, .sendingCredentials, .deviceAcknowledged, .seenOnLAN])
        #expect(!result.trace.json.serialized().contains("correct horse"))
    }

    @Test("a device not in SoftAP mode never answers: a timeout at the acknowledgement; a password too long for GAgent is refused first")
    func failures() async throws {
        let announcements = freeUDPPort()
        let server = try Self.server(onboarding: false, announceTo: announcements)
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        let addresses = try await server.addresses()
        let options = SoftAPOptions(
            device: LANEndpoint(host: "127.0.0.1", port: addresses.udpPort), listenHost: "127.0.0.1", announcementPort: nil,
            retryInterval: .milliseconds(100), answerTimeout: .milliseconds(600))
        let silent = await #expect(throws: OnboardingFailure.self) { try await SoftAPOnboarding.run(ssid: "HomeNet", password: "pw", options: options) }
        #expect(silent?.step == .deviceAcknowledged && silent?.error.code == .timeout)
        let tooLong = await #expect(throws: OnboardingFailure.self) {
            try await SoftAPOnboarding.run(ssid: "HomeNet", password: String(repeating: "x", count: 33), options: options)
        }
        #expect(tooLong?.step == .preparing && tooLong?.error.code == .invalidArgument)
    }

    @Test("web_config.cgi: the query taken, the device announced; a device not in SoftAP mode answers its form, a space in the password is refused first")
    func webConfig() async throws {
        let announcements = freeUDPPort()
        let server = try Self.server(onboarding: true, announceTo: announcements, webConfig: true)
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        let addresses = try await server.addresses()
        var options = SoftAPOptions(
            device: LANEndpoint(host: "127.0.0.1", port: addresses.udpPort), listenHost: "127.0.0.1", announcementPort: announcements,
            answerTimeout: .seconds(5), announcementTimeout: .seconds(10))
        let webPort = try #require(addresses.webConfigPort)
        options.webConfigPort = webPort
        let spaced = await #expect(throws: OnboardingFailure.self) {
            try await SoftAPOnboarding.run(ssid: "HomeNet", password: "correct horse", options: options)
        }
        #expect(spaced?.step == .preparing && spaced?.error.code == .invalidArgument)
        let steps = StepLog()
        let result = try await SoftAPOnboarding.run(ssid: "HomeNet", password: "correct-horse", options: options) { steps.append($0) }
        #expect(server.device.configuredSSID == "HomeNet" && result.did == "gKufzxZwYeyd3Skbsb6mza")
        #expect(steps.all == [.preparing, .sendingCredentials, .deviceAcknowledged, .seenOnLAN])
        #expect(result.trace.entries.contains { $0.event == "web_config" } && !result.trace.json.serialized().contains("correct-horse"))
        // Onboarded now: the device answers its form, which the SDK reads as a refusal.
        options.announcementPort = nil
        let again = await #expect(throws: OnboardingFailure.self) { try await SoftAPOnboarding.run(ssid: "Other", password: "pw", options: options) }
        #expect(again?.step == .sendingCredentials && again?.error.code == .unexpectedResponse)
        #expect(server.device.configuredSSID == "HomeNet")
    }
}

import Logging
import Synchronization
import Testing
import Tether
import TetherAgent
import TetherTestSupport

/// Smart config end to end on loopback: the SDK sends the credentials as datagram lengths, the
/// agent's device rebuilds them from the lengths it receives, takes the network and answers as
/// that encoding's devices do, and the SDK reports the device.
///
/// One test at a time: the senders run at full speed (`interval: .zero`), and two ESP-Touch v1
/// floods at once on a loaded 2-core machine once kept both devices from ever seeing a whole
/// cycle within 20 s (each test takes well under a second alone).
@Suite("Smart config: SDK ↔ agent on loopback", .serialized, .timeLimit(.minutes(1)))
struct SmartConfigTests {
    static func device() throws -> VirtualDevice {
        let model = try Fixtures.petHouse()
        let identity = DeviceIdentity(
            did: "gKufzxZwYeyd3Skbsb6mza", mac: [0xac, 0xcf, 0x23, 0x50, 0xd4, 0x46], passcode: "ABCDEFGHIJ", productKey: model.productKey)
        return try VirtualDevice(model: model, identity: identity, onboarding: true)
    }

    @Test("every encoding: the device takes the network and the SDK hears its answer", arguments: SmartConfigEncoding.allCases)
    func onboards(encoding: SmartConfigEncoding) async throws {
        let device = try Self.device()
        let answerPort = freeUDPPort()
        let key = Array("1234567890123456".utf8)
        let listener = SmartConfigListener(
            device: device,
            configuration: SmartConfigListenerConfiguration(host: "127.0.0.1", port: 0, acknowledgementPort: answerPort, espTouchV2Key: key),
            logger: Logger(label: "test.smartconfig"))
        let listening = Task { try await listener.run() }
        defer { listening.cancel() }
        let port = try await listener.port()
        let credentials = try SmartConfigCredentials(ssid: "HomeNet-5", password: "correct horse battery", bssid: [1, 2, 3, 4, 5, 6])
        let steps = StepLog()
        let options = SmartConfigOptions(
            encoding: encoding, target: LANEndpoint(host: "127.0.0.1", port: port), phoneIP: [127, 0, 0, 1], listenHost: "127.0.0.1",
            acknowledgementPort: answerPort, espTouchV2: ESPTouchV2.Options(aesKey: key), interval: .zero, timeout: .seconds(20))
        let result = try await SmartConfig.run(credentials, options: options) { steps.append($0) }
        #expect(device.configuredSSID == "HomeNet-5")
        #expect(result.ip == "127.0.0.1")
        #expect(result.mac == (encoding == .airKiss ? nil : "ac:cf:23:50:d4:46"))
        #expect(steps.all == [.preparing, .sendingCredentials, .deviceAcknowledged])
        // The flight recorder: what happened, and never the password.
        let trace = result.trace.json.serialized()
        #expect(result.trace.outcome == "acknowledged")
        #expect(trace.contains("sockets_open") && trace.contains("answer_received"))
        #expect(!trace.contains("correct horse") && !trace.contains("1234567890123456"))
    }

    @Test("ESP-Touch v1, the device listening on every address: its answer names the address it reaches the phone from")
    func everyAddress() async throws {
        let device = try Self.device()
        let answerPort = freeUDPPort()
        let listener = SmartConfigListener(
            device: device, configuration: SmartConfigListenerConfiguration(host: "0.0.0.0", port: 0, acknowledgementPort: answerPort),
            logger: Logger(label: "test.smartconfig"))
        let listening = Task { try await listener.run() }
        defer { listening.cancel() }
        let port = try await listener.port()
        let options = SmartConfigOptions(
            encoding: .espTouchV1, target: LANEndpoint(host: "127.0.0.1", port: port), listenHost: "127.0.0.1", acknowledgementPort: answerPort,
            interval: .zero, timeout: .seconds(20))
        // No phoneIP: the SDK finds its own address toward the target (127.0.0.1 on loopback).
        let result = try await SmartConfig.run(try SmartConfigCredentials(ssid: "HomeNet", password: "pw"), options: options)
        #expect(result.ip == "127.0.0.1" && result.trace.json.serialized().contains("phone_address"))
        #expect(device.configuredSSID == "HomeNet")
    }

    @Test("nobody answers: a timeout at the acknowledgement step, with a trace")
    func timesOut() async throws {
        let credentials = try SmartConfigCredentials(ssid: "HomeNet", password: "secret-password")
        let options = SmartConfigOptions(
            encoding: .espTouchV1, target: LANEndpoint(host: "127.0.0.1", port: 9), phoneIP: [127, 0, 0, 1], listenHost: "127.0.0.1",
            acknowledgementPort: freeUDPPort(), interval: .zero, timeout: .milliseconds(500))
        let failure = await #expect(throws: OnboardingFailure.self) { try await SmartConfig.run(credentials, options: options) }
        #expect(failure?.step == .deviceAcknowledged && failure?.error.code == .timeout)
        #expect(failure?.trace.outcome == "failed" && failure?.trace.json.serialized().contains("secret-password") == false)
    }
}

final class StepLog: Sendable {
    private let steps = Mutex<[OnboardingStep]>([])
    func append(_ step: OnboardingStep) { steps.withLock { $0.append(step) } }
    var all: [OnboardingStep] { steps.withLock { $0 } }
}

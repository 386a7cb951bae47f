import ArgumentParser
import Logging
import Tether
import TetherAgent

/// What onboarding costs the phone: the smart-config encoders and the ESP-IDF security handshakes
/// per call, and the time to "connected" / "acknowledged" for each mode against an in-process
/// agent on loopback (no cloud: scripts/bench-onboarding.sh times the binding with processes).
struct OnboardingCosts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboarding", abstract: "Smart-config encoders, ESP-IDF handshakes, and each mode's time to done against an in-process agent.")

    @Option(name: .customLong("attempts"), help: "Onboarding attempts per mode (a fifth more first, untimed).") var attempts = 20
    @Option(help: "text or json.") var format = "text"

    func run() async throws {
        let credentials = try SmartConfigCredentials(ssid: "HomeNet-5G", password: "correct horse", bssid: [0x02, 0x11, 0x22, 0x33, 0x44, 0x55])
        let phoneIP: [UInt8] = [192, 168, 1, 10]
        var costs: [(String, Double)] = []
        costs.append(
            (
                "esptouch-v1 datum",
                try TetherBenchmarks.nanosecondsPerOperation(iterations: 20_000) {
                    _ = try ESPTouchV1.datum(credentials, phoneIP: phoneIP)
                }
            ))
        costs.append(
            (
                "esptouch-v2 packets",
                try TetherBenchmarks.nanosecondsPerOperation(iterations: 20_000) {
                    _ = try ESPTouchV2.packets(credentials)
                }
            ))
        let aes = ESPTouchV2.Options(aesKey: Array("0123456789abcdef".utf8))
        costs.append(
            (
                "esptouch-v2 packets, AES",
                try TetherBenchmarks.nanosecondsPerOperation(iterations: 5_000) {
                    _ = try ESPTouchV2.packets(credentials, options: aes)
                }
            ))
        costs.append(
            (
                "airkiss lengths",
                try TetherBenchmarks.nanosecondsPerOperation(iterations: 20_000) {
                    _ = try AirKiss.lengths(credentials, random: 42)
                }
            ))
        costs.append(
            (
                "esp-idf sec1 handshake, both sides",
                try TetherBenchmarks.nanosecondsPerOperation(iterations: 200) {
                    var client = try ESPSecurity1.Client(pop: Array("abcd1234".utf8))
                    var device = try ESPSecurity1.Device(pop: Array("abcd1234".utf8))
                    try Self.handshake(&client, &device)
                }
            ))
        let credential = ESPSecurity2.Credential(username: "wifiprov", password: "abcd1234")
        costs.append(
            (
                "esp-idf sec2 handshake, both sides",
                try TetherBenchmarks.nanosecondsPerOperation(iterations: 4) {
                    var client = ESPSecurity2.Client(username: "wifiprov", password: "abcd1234")
                    var device = ESPSecurity2.Device(credential: credential)
                    try Self.handshake(&client, &device)
                }
            ))

        var modes: [(String, [Int64])] = []
        for security in [0, 1, 2] { modes.append(("esp-idf sec\(security) → connected", try await espAttempts(security: security))) }
        modes.append(("gagent 0x0001 → acknowledged", try await softAPAttempts(webConfig: false)))
        modes.append(("gagent web_config.cgi → acknowledged", try await softAPAttempts(webConfig: true)))

        if format == "json" {
            var object = JSONObject()
            for (name, nanoseconds) in costs { object[name] = .double(nanoseconds) }
            for (name, samples) in modes { object[name + " (µs p50)"] = .int(Self.median(samples)) }
            print(JSONValue.object(object).serialized(pretty: true))
            return
        }
        print("per call (median of 5 runs):")
        for (name, nanoseconds) in costs { print("  \(name): \(Self.describe(nanoseconds))") }
        print("time to done against an in-process agent on loopback, \(attempts) attempts each:")
        for (name, samples) in modes {
            print("  \(name): p50 \(Self.milliseconds(Self.median(samples))), max \(Self.milliseconds(samples.max() ?? 0))")
        }
    }

    static func handshake(_ client: inout some ESPClientSecurity, _ device: inout some ESPDeviceSecurity) throws {
        let response0 = try device.respond(to: client.command0())
        if let command1 = try client.command1(after: response0) { try client.finish(after: try device.respond(to: command1)) }
    }

    static func describe(_ nanoseconds: Double) -> String {
        nanoseconds >= 1_000_000 ? "\(Int((nanoseconds / 1_000_000).rounded())) ms" : "\(Int((nanoseconds / 1000).rounded())) µs"
    }

    static func median(_ samples: [Int64]) -> Int64 { samples.isEmpty ? 0 : samples.sorted()[samples.count / 2] }

    static func microseconds(since start: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    static func milliseconds(_ microseconds: Int64) -> String {
        let tenths = (microseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10) ms"
    }

    static var quiet: Logger {
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        return logger
    }

    private func espAttempts(security: Int) async throws -> [Int64] {
        var samples: [Int64] = []
        for index in 0..<(attempts + attempts / 5) {
            var generator = SplitMix64(seed: UInt64(index))
            let device = try VirtualDevice(model: BenchmarkProducts.thermostat, identity: .random(productKey: "pk", using: &generator), onboarding: true)
            let server = ESPProvisioningServer(
                device: device, configuration: ESPProvisioningConfiguration(host: "127.0.0.1", port: 0, security: security, pop: Array("abcd1234".utf8)),
                logger: Self.quiet)
            let milliseconds = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                defer { group.cancelAll() }
                var options = ESPProvisioningOptions(
                    device: LANEndpoint(host: "127.0.0.1", port: try await server.port()), security: security, pop: "abcd1234", sec2Username: "wifiprov",
                    sec2Password: "abcd1234")
                options.pollInterval = .milliseconds(20)
                let start = ContinuousClock.now
                _ = try await ESPProvisioning.run(ssid: Array("HomeNet".utf8), password: Array("correct horse".utf8), options: options)
                return Self.microseconds(since: start)
            }
            if index >= attempts / 5 { samples.append(milliseconds) }
        }
        return samples
    }

    private func softAPAttempts(webConfig: Bool) async throws -> [Int64] {
        var samples: [Int64] = []
        for index in 0..<(attempts + attempts / 5) {
            var generator = SplitMix64(seed: UInt64(index))
            let device = try VirtualDevice(model: BenchmarkProducts.thermostat, identity: .random(productKey: "pk", using: &generator), onboarding: true)
            let server = LANDeviceServer(
                device: device,
                configuration: LANDeviceConfiguration(
                    host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil), webConfigPort: webConfig ? 0 : nil),
                logger: Self.quiet)
            let milliseconds = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                defer { group.cancelAll() }
                let addresses = try await server.addresses()
                var options = SoftAPOptions(
                    device: LANEndpoint(host: "127.0.0.1", port: addresses.udpPort), listenHost: "127.0.0.1", announcementPort: nil,
                    retryInterval: .milliseconds(200))
                options.webConfigPort = addresses.webConfigPort
                let start = ContinuousClock.now
                _ = try await SoftAPOnboarding.run(ssid: "HomeNet", password: "correct-horse", options: options)
                return Self.microseconds(since: start)
            }
            if index >= attempts / 5 { samples.append(milliseconds) }
        }
        return samples
    }
}

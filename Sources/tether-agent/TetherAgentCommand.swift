import ArgumentParser
import Logging
import TetherAgent
import TetherCLISupport
import TetherCore

@main
struct TetherAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-agent",
        abstract: "The device side of Tether: speaks the Gizwits GAgent LAN protocol like a Wi-Fi module does.",
        subcommands: [Simulate.self]
    )
}

struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run virtual devices of a product on the LAN.",
        discussion: """
            Each device answers discovery on UDP, takes control on TCP and changes its read-only \
            points over time. With --count N on an IPv4 address, device i (0-based) binds to that \
            address plus i, with the same ports: 127.0.0.1, 127.0.0.2, … on Linux loopback, as real \
            devices each have their own address. Identities (did, MAC, passcode) are random unless \
            --seed is given.
            """
    )

    @Option(name: .long, help: "Product model file: Gizwits data points or Aliyun TSL JSON.")
    var product: String

    @Option(name: .long, help: "Address to listen on (the first device's, with --count).")
    var bind = "0.0.0.0"

    @Option(name: .customLong("udp-port"), help: "UDP discovery port.")
    var udpPort = 12414

    @Option(name: .customLong("tcp-port"), help: "TCP control port.")
    var tcpPort = 12416

    @Flag(name: .long, help: "Keep the binding window open: hand the passcode to any app that asks.")
    var bindable = false

    @Flag(name: .long, help: "Start in SoftAP onboarding mode, waiting for Wi-Fi credentials (0x0001).")
    var softap = false

    @Option(name: .long, help: "Number of devices.")
    var count = 1

    @Option(name: .long, help: "Seed for identities and the simulation, for reproducible runs.")
    var seed: UInt64?

    @Option(name: .long, help: "Seconds between simulated sensor changes (0 turns the simulation off).")
    var interval: Double = 2

    @Option(name: .customLong("idle-timeout"), help: "Seconds of client silence before the device drops it.")
    var idleTimeout: Double = 14

    @Option(name: .long, help: "Where announcements go, HOST:PORT, or 'none'. Default: broadcast to port 2415 (127.0.0.1:2415 on loopback).")
    var announce: String?

    @Flag(name: .long, help: "Print each device as a JSON line instead of text.")
    var json = false

    @Flag(name: .long, help: "Log protocol details to standard error.")
    var verbose = false

    func validate() throws {
        guard count >= 1, count <= 250 else { throw ValidationError("--count must be between 1 and 250") }
        if count > 1, IPv4.parse(bind) == nil || bind == "0.0.0.0" {
            throw ValidationError("--count above 1 needs a specific IPv4 --bind address (devices get consecutive addresses), e.g. --bind 127.0.0.1")
        }
        if let problem = problemWithSeconds(interval, option: "--interval", maximum: 3600) { throw ValidationError(problem) }
        if let problem = problemWithSeconds(idleTimeout, option: "--idle-timeout", maximum: 86_400, allowZero: false) { throw ValidationError(problem) }
        if let announce, announce != "none", Self.hostPort(announce) == nil {
            throw ValidationError("--announce takes HOST:PORT or none")
        }
    }

    static func hostPort(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        return (String(text[..<colon]), port)
    }

    func run() async throws {
        let model = try loadProduct(product)
        var logger = Logger(label: "tether.agent")
        logger.logLevel = verbose ? .debug : .info
        var generator = SplitMix64(seed: seed ?? UInt64.random(in: 0...UInt64.max))
        var built: [LANDeviceServer] = []
        for index in 0..<count {
            let host = count == 1 ? bind : IPv4.parse(bind)!.adding(index).description
            let identity = DeviceIdentity.random(productKey: model.productKey.isEmpty ? "tether-product" : model.productKey, using: &generator)
            let device = try VirtualDevice(model: model, identity: identity, bindable: bindable, onboarding: softap)
            let target: (host: String, port: Int)?? = announce.map { $0 == "none" ? .some(nil) : .some(Self.hostPort($0)) } ?? .none
            let configuration = LANDeviceConfiguration(
                host: host, udpPort: udpPort, tcpPort: tcpPort, announcementTarget: target,
                idleTimeout: .milliseconds(Int(idleTimeout * 1000))
            )
            built.append(LANDeviceServer(device: device, configuration: configuration, logger: logger))
        }
        let simulationSeed = generator.next()
        let servers = built
        let interval = self.interval
        let json = self.json
        try await runUntilTerminated {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, server) in servers.enumerated() {
                    group.addTask { try await server.run() }
                    group.addTask { await Self.report(server.device, index: index + 1) }
                    if interval > 0 {
                        let simulator = DeviceSimulator(device: server.device, interval: .milliseconds(Int(interval * 1000)), seed: simulationSeed &+ UInt64(index))
                        group.addTask { await simulator.run() }
                    }
                }
                for (index, server) in servers.enumerated() {
                    let addresses = try await server.addresses()
                    Self.printDevice(server.device, addresses: addresses, index: index + 1, json: json)
                }
                try await group.next()
            }
        }
    }

    static func printDevice(_ device: VirtualDevice, addresses: LANDeviceAddresses, index: Int, json: Bool) {
        let identity = device.identity
        if json {
            var object = JSONObject()
            object["device"] = .int(Int64(index))
            object["did"] = .string(identity.did)
            object["mac"] = .string(identity.macString)
            object["passcode"] = .string(identity.passcode)
            object["productKey"] = .string(identity.productKey)
            object["host"] = .string(addresses.host)
            object["udpPort"] = .int(Int64(addresses.udpPort))
            object["tcpPort"] = .int(Int64(addresses.tcpPort))
            printJSON(.object(object))
        } else {
            printLine("device \(index): did=\(identity.did) mac=\(identity.macString) passcode=\(identity.passcode) product=\(identity.productKey) udp=\(addresses.host):\(addresses.udpPort) tcp=\(addresses.host):\(addresses.tcpPort)")
        }
    }

    /// What happens to a device, on standard error, for the person running the simulator.
    static func report(_ device: VirtualDevice, index: Int) async {
        for await event in device.events.subscribe() {
            let line: String
            switch event {
            case .clientConnected(let client): line = "client \(client) connected"
            case .clientLoggedIn(let client): line = "client \(client) logged in"
            case .clientRefused(let client, let reason): line = "client \(client) refused: \(reason)"
            case .clientDisconnected(let client): line = "client \(client) disconnected"
            case .controlled(let values, let client): line = "written by \(client): \(describe(values))"
            case .rejectedControl(let error, let client): line = "rejected from \(client): \(error)"
            case .transparentData(let bytes, let client): line = "\(bytes.count) bytes of transparent data from \(client) (echoed)"
            case .configured(let ssid): line = "onboarded to Wi-Fi \"\(ssid)\""
            }
            printError("[device \(index)] \(line)")
        }
    }
}

/// Just enough IPv4 to hand out consecutive addresses.
struct IPv4: CustomStringConvertible {
    var value: UInt32

    static func parse(_ text: String) -> IPv4? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let octet = UInt8(part) else { return nil }
            value = value << 8 | UInt32(octet)
        }
        return IPv4(value: value)
    }

    func adding(_ offset: Int) -> IPv4 { IPv4(value: value &+ UInt32(offset)) }

    var description: String {
        [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xFF) }.joined(separator: ".")
    }
}

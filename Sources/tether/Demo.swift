import ArgumentParser
import Logging
import Tether
import TetherAgent
import TetherCLISupport

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a virtual device on loopback and drive it: discover, subscribe, write, watch.",
        discussion: """
            Needs nothing installed and no file: the device is the built-in "pet house" product, \
            served by the device agent inside this process on 127.0.0.1 with ports the system \
            picks. Everything goes over real UDP and TCP sockets, through the same SDK calls an \
            app makes.
            """
    )

    @Option(name: .long, help: "Seconds to watch the device's reports (0: until Ctrl-C).")
    var seconds: Double = 10

    @Option(name: .long, help: "Product model file to simulate instead of the built-in one.")
    var product: String?

    func validate() throws {
        if let problem = problemWithSeconds(seconds, option: "--seconds") { throw ValidationError(problem) }
    }

    func run() async throws {
        let model = try product.map(loadProduct) ?? ExampleProducts.petHouse
        var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
        let identity = DeviceIdentity.random(productKey: model.productKey, using: &generator)
        let virtual = try VirtualDevice(model: model, identity: identity, bindable: true)
        var quiet = Logger(label: "tether.demo")
        quiet.logLevel = .critical
        let server = LANDeviceServer(
            device: virtual,
            configuration: LANDeviceConfiguration(host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil)),
            logger: quiet
        )
        let seconds = self.seconds
        let simulationSeed = generator.next()
        let logger = quiet
        try await runUntilTerminated {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                group.addTask { await DeviceSimulator(device: virtual, interval: .seconds(1), seed: simulationSeed).run() }
                let addresses = try await server.addresses()
                printLine("▶ virtual device \"\(model.name)\" on 127.0.0.1, UDP \(addresses.udpPort), TCP \(addresses.tcpPort)")
                try await Self.drive(model: model, addresses: addresses, seconds: seconds, logger: logger)
                group.cancelAll()
            }
        }
    }

    static func drive(model: ThingModel, addresses: LANDeviceAddresses, seconds: Double, logger: Logger) async throws {
        let lan = LANConfiguration(
            discoveryTargets: [LANEndpoint(host: "127.0.0.1", port: addresses.udpPort)],
            discoveryInterval: .milliseconds(300),
            tcpPort: addresses.tcpPort
        )
        try await withTetherClient(configuration: .init(products: [model], lan: lan), logger: logger) { client in
            printLine("▶ discovering…")
            var found: Device?
            for await list in client.deviceListUpdates() {
                if let device = list.first { found = device; break }
            }
            guard let device = found else { throw TetherError(.deviceOffline, "the device did not answer discovery") }
            printLine("  found did=\(device.did) mac=\(device.mac ?? "?") product=\(device.productKey)")
            printLine("▶ subscribing (passcode from the binding window, login, status)…")
            try await device.subscribe()
            printLine("  \(device.netStatus)")
            printStatus(device.status, model: model)
            let write = Self.demoWrite(for: model)
            if !write.isEmpty {
                printLine("▶ writing \(describe(write)) with sn 1…")
                let result = try await device.write(write, sn: 1)
                printLine("  acknowledged sn \(result.sn): \(describe((result.status?.data ?? [:]).filter { write[$0.key] != nil }))")
            }
            printLine(seconds > 0 ? "▶ watching reports for \(Int(seconds)) s (sensors drift, alerts trip)…" : "▶ watching reports until Ctrl-C…")
            let events = device.events()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events {
                        if case .status(let report) = event { LANWatch.print(report, json: false) }
                    }
                }
                if seconds > 0 {
                    group.addTask { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) }
                    try await group.next()
                    group.cancelAll()
                } else {
                    try await group.next()
                }
            }
            printLine("▶ done. The same commands work on a real device: tether lan discover | status | write | watch")
        }
    }

    /// Something visible to write: the first writable bool turned on, the first enum set to its
    /// last label.
    static func demoWrite(for model: ThingModel) -> [String: DataValue] {
        var values: [String: DataValue] = [:]
        if let toggle = model.dataPoints.first(where: { $0.kind == .writable && $0.type == .bool }) {
            values[toggle.name] = .bool(true)
        }
        for point in model.dataPoints where point.kind == .writable {
            if case .enumeration(let labels) = point.type, labels.count > 1 {
                values[point.name] = .int(Int64(labels.count - 1))
                break
            }
        }
        return values
    }
}

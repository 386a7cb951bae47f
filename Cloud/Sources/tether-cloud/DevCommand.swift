import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherAlink
import TetherCloud
import TetherCloudClient
import TetherCore

/// A whole Tether on loopback for demos and app tests: a cloud, a demo app, product and user,
/// and virtual devices reachable both on the LAN and through the cloud.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run a local stack: a cloud on SQLite, a demo app, product and user, and virtual devices on loopback LAN and in the cloud.",
        discussion: """
            Everything lives in --state (created on first run, reused afterwards: the same app, \
            user and devices every time). Device i listens on 127.0.0.(i+1) (Linux loopback; on \
            macOS add the addresses with `ifconfig lo0 alias 127.0.0.2` …) and connects to the \
            cloud's device gateway. All but the last device are bound to the demo user (the only one, \
            when there is one); the last is left for `tether bind --qr`. The `tether` CLI finds the stack through \
            TETHER_HOME=STATE/cli, whose config.json this command writes.
            """
    )

    @Option(help: "Directory of the stack's database and identities.")
    var state = ".tether-dev"

    @Option(name: .customLong("http-port"), help: "Port of the REST and WebSocket API.")
    var httpPort = 8080

    @Option(name: .customLong("mqtt-port"), help: "Port of the device gateway.")
    var mqttPort = 1883

    @Option(help: "Number of virtual devices (1 to 20).")
    var devices = 3

    @Option(name: .customLong("udp-port"), help: "The devices' UDP discovery port.")
    var udpPort = 12414

    @Option(name: .customLong("tcp-port"), help: "The devices' TCP control port.")
    var tcpPort = 12416

    @Option(help: "Seconds between simulated sensor changes (0: none).")
    var interval: Double = 5

    func validate() throws {
        guard (1...20).contains(devices) else { throw ValidationError("--devices is 1 to 20") }
        guard interval >= 0, interval <= 3600 else { throw ValidationError("--interval is 0 to 3600 seconds") }
    }

    func run() async throws {
        var logger = Logger(label: "tether-cloud.dev")
        logger.logLevel = .warning
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let stack = try await DevStack.prepare(directory: state, deviceCount: devices, logger: logger)

        var configuration = CloudConfiguration()
        configuration.bindAddress = "127.0.0.1"
        configuration.httpPort = httpPort
        configuration.database = try DatabaseURL("sqlite:\(state)/cloud.sqlite")
        var gateway = GatewayConfiguration()
        gateway.mqttPort = mqttPort
        configuration.gateway = gateway
        configuration.m2m = M2MEndpoint(host: "127.0.0.1", mqttPort: mqttPort, mqttTLSPort: 8883, webSocketPort: httpPort)

        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let (serverConfiguration, serverLogger) = (configuration, logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Finished however serve ends, so that a server that cannot start does not leave
                // the wait below hanging.
                defer { readyContinuation.finish() }
                try await CloudServer.serve(configuration: serverConfiguration, logger: serverLogger) { _ in readyContinuation.yield() }
            }
            var started = false
            for await _ in ready {
                started = true
                break
            }
            guard started else {
                try await group.next()
                throw ValidationError("the cloud did not start")
            }
            let endpoint = CloudEndpoint(host: "127.0.0.1", port: httpPort)
            try await stack.bindDemoDevices(endpoint: endpoint)
            let runners = try stack.deviceRunners(udpPort: udpPort, tcpPort: tcpPort, mqttPort: mqttPort, interval: interval, logger: logger)
            for runner in runners { group.addTask { await runner() } }
            try stack.writeCLIConfig(directory: state, cloud: "http://127.0.0.1:\(httpPort)", udpPort: udpPort, tcpPort: tcpPort)
            stack.printSummary(state: state, httpPort: httpPort, mqttPort: mqttPort, udpPort: udpPort, tcpPort: tcpPort)
            // The server returns on SIGINT or SIGTERM; the devices stop with it.
            try await group.next()
            group.cancelAll()
        }
    }
}

/// The stack's identities, in `STATE/stack.json`.
struct DevStack {
    static let username = "demo"
    static let password = "tether-demo-1"

    var appID: String
    var productKey: String
    var productSecret: String
    var devices: [Administration.CreatedDevice]

    /// Reads the stack, or creates its app, product and devices in a new database.
    static func prepare(directory: String, deviceCount: Int, logger: Logger) async throws -> DevStack {
        let path = "\(directory)/stack.json"
        let database = try await DatabaseURL("sqlite:\(directory)/cloud.sqlite").open(logger: logger)
        do {
            var stack: DevStack
            if let data = FileManager.default.contents(atPath: path) {
                stack = try DevStack(json: try JSONValue.parse(String(decoding: data, as: UTF8.self)))
            } else {
                let admin = Administration(database: database)
                let app = try await admin.createApp(name: "Tether demo")
                let model = try ExampleProducts.petHouse.gizwitsJSON().serialized()
                let product = try await admin.createProduct(name: "Pet house", modelFile: Array(model.utf8), format: .gizwits)
                stack = DevStack(appID: app.appID, productKey: product.productKey, productSecret: product.productSecret, devices: [])
            }
            let admin = Administration(database: database)
            while stack.devices.count < deviceCount {
                let index = stack.devices.count + 1
                let mac = String(format: "027e7e0000%02x", index)
                stack.devices.append(try await admin.createDevice(productKey: stack.productKey, name: "pet-house-\(index)", mac: mac))
            }
            stack.devices = Array(stack.devices.prefix(deviceCount))
            // It holds the product's and the devices' secrets: the owner's eyes only.
            try stack.json.serialized(pretty: true).write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            await database.close()
            return stack
        } catch {
            await database.close()
            throw error
        }
    }

    /// Registers (or logs in) the demo user and binds every device but the last to it.
    func bindDemoDevices(endpoint: CloudEndpoint) async throws {
        let api = TetherCloudAPI(endpoint: endpoint, appID: appID)
        let session: CloudSession
        do {
            session = try await api.register(username: Self.username, password: Self.password)
        } catch {
            session = try await api.login(username: Self.username, password: Self.password)
        }
        let bound = Set(try await api.bindings(session).map(\.did))
        // The last device is left for `tether bind --qr` when there are several.
        for device in devices.count > 1 ? devices.dropLast() : devices[...] where !bound.contains(device.did) {
            _ = try await api.bind(session, did: device.did, passcode: device.passcode)
        }
    }

    /// One task body per device: its LAN side on 127.0.0.(i+1), its cloud link, its simulation.
    func deviceRunners(udpPort: Int, tcpPort: Int, mqttPort: Int, interval: Double, logger: Logger) throws -> [@Sendable () async -> Void] {
        try devices.enumerated().map { index, created in
            var generator = SplitMix64(seed: UInt64(index) &+ 0x7e7e)
            var identity = DeviceIdentity.random(productKey: productKey, using: &generator)
            identity.did = created.did
            identity.passcode = created.passcode
            if let mac = created.mac {
                guard let bytes = MACAddress.bytes(mac) else {
                    throw ValidationError("the stack's stack.json has a MAC that is not 12 hex digits: \(mac)")
                }
                identity.mac = bytes
            }
            var model = ExampleProducts.petHouse
            model.productKey = productKey
            let device = try VirtualDevice(model: model, identity: identity, bindable: true)
            let server = LANDeviceServer(
                device: device,
                configuration: LANDeviceConfiguration(host: "127.0.0.\(index + 1)", udpPort: udpPort, tcpPort: tcpPort, announcementTarget: .some(nil)),
                logger: logger
            )
            let link = CloudLink(
                device: device,
                configuration: AlinkDeviceConfiguration(
                    host: "127.0.0.1", port: mqttPort,
                    device: try AlinkDeviceIdentity(productKey: created.productKey, deviceName: created.deviceName),
                    deviceSecret: created.deviceSecret
                ),
                logger: logger
            )
            let simulator = interval > 0 ? DeviceSimulator(device: device, interval: .milliseconds(Int(interval * 1000)), seed: UInt64(index)) : nil
            return {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do { try await server.run() } catch { FileHandle.standardError.write(Data("device \(index + 1): \(error)\n".utf8)) }
                    }
                    group.addTask { await link.run() }
                    if let simulator { group.addTask { await simulator.run() } }
                }
            }
        }
    }

    /// `STATE/cli/config.json`, so that `TETHER_HOME=STATE/cli tether …` finds the stack.
    func writeCLIConfig(directory: String, cloud: String, udpPort: Int, tcpPort: Int) throws {
        try FileManager.default.createDirectory(atPath: "\(directory)/cli", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let config: JSONValue = [
            "cloud": .string(cloud), "appId": .string(appID),
            "discovery": .array(devices.indices.map { .string("127.0.0.\($0 + 1):\(udpPort)") }), "tcpPort": .int(Int64(tcpPort)),
        ]
        try config.serialized(pretty: true).write(toFile: "\(directory)/cli/config.json", atomically: true, encoding: .utf8)
    }

    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    func printSummary(state: String, httpPort: Int, mqttPort: Int, udpPort: Int, tcpPort: Int) {
        var lines = [
            "▶ cloud  http://127.0.0.1:\(httpPort) (SQLite \(state)/cloud.sqlite), device gateway mqtt://127.0.0.1:\(mqttPort)",
            "▶ app ID \(appID), product \"Pet house\" \(productKey)",
            "▶ user   \(Self.username) / \(Self.password)",
        ]
        for (index, device) in devices.enumerated() {
            let bound = devices.count == 1 || index < devices.count - 1
            lines.append(
                "▶ device \(index + 1): did \(device.did), LAN 127.0.0.\(index + 1) UDP \(udpPort) TCP \(tcpPort), cloud \(device.deviceName)\(bound ? ", bound to \(Self.username)" : ", not bound")"
            )
            if !bound, let mac = device.mac, let code = try? BindingQRCode(productKey: productKey, mac: mac, productSecret: productSecret) {
                lines.append("  its binding QR code: \(code.text)")
            }
        }
        var pathLine: [String] = []
        // scripts/dev.sh says where it built the CLI.
        if let binDirectory = ProcessInfo.processInfo.environment["TETHER_CLI_BIN_DIR"], !binDirectory.isEmpty {
            pathLine = ["  export PATH=\"\(Self.absolute(binDirectory)):$PATH\""]
        }
        lines +=
            [
                "",
                "Drive it from another terminal:",
                "  export TETHER_HOME=\(Self.absolute(state))/cli",
            ] + pathLine + [
                "  tether login --username \(Self.username) --password \(Self.password)",
                "  tether devices",
                "  tether write \(devices[0].did) LED_OnOff=true",
                "  tether watch \(devices[0].did)",
                "Ctrl-C stops the stack; the next run reuses it.",
            ]
        // Written at once, so that a script reading a pipe sees it before the stack stops.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    // MARK: stack.json

    var json: JSONValue {
        .object([
            "appId": .string(appID), "productKey": .string(productKey), "productSecret": .string(productSecret),
            "devices": .array(
                devices.map { device in
                    .object([
                        "did": .string(device.did), "productKey": .string(device.productKey), "deviceName": .string(device.deviceName),
                        "deviceSecret": .string(device.deviceSecret), "passcode": .string(device.passcode), "mac": device.mac.map(JSONValue.string) ?? .null,
                    ])
                }),
        ])
    }

    init(appID: String, productKey: String, productSecret: String, devices: [Administration.CreatedDevice]) {
        self.appID = appID
        self.productKey = productKey
        self.productSecret = productSecret
        self.devices = devices
    }

    init(json: JSONValue) throws {
        guard let appID = json["appId"]?.stringValue, let productKey = json["productKey"]?.stringValue,
            let productSecret = json["productSecret"]?.stringValue, let devices = json["devices"]?.arrayValue
        else { throw ValidationError("the stack's stack.json is damaged; remove the state directory to start afresh") }
        self.appID = appID
        self.productKey = productKey
        self.productSecret = productSecret
        self.devices = try devices.map { entry in
            guard let did = entry["did"]?.stringValue, let deviceName = entry["deviceName"]?.stringValue,
                let secret = entry["deviceSecret"]?.stringValue, let passcode = entry["passcode"]?.stringValue
            else { throw ValidationError("the stack's stack.json is damaged; remove the state directory to start afresh") }
            return Administration.CreatedDevice(
                did: did, productKey: productKey, deviceName: deviceName, deviceSecret: secret, passcode: passcode, mac: entry["mac"]?.stringValue)
        }
    }
}

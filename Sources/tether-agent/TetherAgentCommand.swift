import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherAlink
import TetherCLISupport
import TetherCore
import TetherTuyaLAN

@main
struct TetherAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-agent",
        abstract: "The device side of Tether: speaks the Gizwits GAgent LAN protocol like a Wi-Fi module does.",
        version: TetherVersion.current,
        subcommands: [Simulate.self, BLESimulate.self]
    )
}

struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run virtual devices of a product on the LAN and, with --cloud, connected to a Tether cloud.",
        discussion: """
            Each device answers discovery on UDP, takes control on TCP and changes its read-only \
            points over time. With --count N on an IPv4 address, device i (0-based) binds to that \
            address plus i, with the same ports: 127.0.0.1, 127.0.0.2, … on Linux loopback, as real \
            devices each have their own address. Identities (did, MAC, passcode) are random unless \
            --seed is given. With --cloud HOST:PORT and --credentials FILE, device i also connects to \
            the cloud's gateway as the i-th device of FILE (Alink over MQTT), reports every change and \
            obeys property sets and service calls; its LAN side keeps working (--no-lan: cloud only).
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

    @Option(
        name: .customLong("web-config-port"), help: "With --softap: also serve GAgent's web_config.cgi on this TCP port (GAgent: 80; 0 lets the system choose)."
    )
    var webConfigPort: Int?

    @Option(
        name: .long,
        help: "Wait for Wi-Fi credentials over: airlink (smart config: ESP-Touch v1, v2 and AirKiss) or esp-idf (wifi_provisioning over SoftAP HTTP).")
    var provisioning: ProvisioningMode?

    @Option(name: .customLong("prov-port"), help: "With --provisioning esp-idf: the HTTP port (ESP-IDF: 80; 0 lets the system choose).")
    var provPort = 80

    @Option(name: .customLong("security"), help: "With --provisioning esp-idf: protocomm security 0, 1 or 2.")
    var provSecurity = 1

    @Option(name: .customLong("pop"), help: "With --provisioning esp-idf --security 1: the proof of possession (default: none).")
    var pop: String?

    @Option(name: .customLong("sec2-username"), help: "With --security 2: the SRP username.") var sec2Username: String?
    @Option(name: .customLong("sec2-password"), help: "With --security 2: the SRP password.") var sec2Password: String?
    @Option(name: .customLong("sec2-patch-version"), help: "With --security 2: sec_patch_ver, 1 (nonce counter) or 0 (old firmware).")
    var sec2PatchVersion = 1

    @Option(
        name: .customLong("wifi-networks"),
        help: "The simulated router's networks, a JSON list [{\"ssid\": ..., \"password\": ...}] (default: any network joins).")
    var wifiNetworks: String?

    @Option(
        name: .customLong("wifi-backend"),
        help: "How onboarding joins Wi-Fi: simulated (the router of --wifi-networks) or networkmanager (nmcli, on a real Linux device).")
    var wifiBackend: WiFiBackendOption = .simulated

    @Option(name: .customLong("wifi-interface"), help: "With --wifi-backend networkmanager: the Wi-Fi interface (default: NetworkManager's choice).")
    var wifiInterface: String?

    @Option(name: .customLong("join-delay"), help: "Seconds the simulated router takes to let the device join (it shows \"connecting\" meanwhile).")
    var joinDelay: Double = 0

    @Option(
        name: .customLong("router-fault"),
        help: "Make joins fail on purpose: refuse-join (the router refuses the association) or dhcp-timeout (no address). Repeatable.")
    var routerFaults: [RouterFaultOption] = []

    @Option(name: .customLong("network-gone"), help: "A network that shows in scans but is gone when the device joins. Repeatable.")
    var goneNetworks: [String] = []

    @Option(name: .customLong("airlink-port"), help: "With --provisioning airlink: the UDP port the phone's datagrams arrive on (0 lets the system choose).")
    var airlinkPort = 7001

    @Option(
        name: .customLong("airlink-ack-port"),
        help: "With --provisioning airlink: the port the answer goes to (default: the encoding's: 18266, the v2 app port, 10000).")
    var airlinkAckPort: Int?

    @Option(name: .customLong("airlink-key"), help: "With --provisioning airlink: the device's 16-character ESP-Touch v2 AES key.")
    var airlinkKey: String?

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

    @Option(name: .long, help: "The cloud's device gateway, HOST:PORT: each device also connects there (Alink over MQTT) with its credentials.")
    var cloud: String?

    @Option(
        name: .long,
        help:
            "With --cloud: the devices' credentials, a JSON file with one object per device or a list of them, as `tether-cloud admin device create --json` prints ({productKey, deviceName, deviceSecret})."
    )
    var credentials: String?

    @Option(name: .customLong("keep-alive"), help: "With --cloud: MQTT keep-alive in seconds (30 to 1200).")
    var keepAlive: UInt16 = 60

    @Option(name: .customLong("firmware-version"), help: "The firmware version the devices run at first (reported to the cloud and on the LAN).")
    var firmwareVersion = "tether01"

    @Option(
        name: .customLong("ota-fault"),
        help:
            "With --cloud: make firmware upgrades fail on purpose: bad-checksum (the package does not verify), interrupt (the download drops halfway and resumes)."
    )
    var otaFaults: [OTAFault] = []

    @Option(
        name: .customLong("lan-passcode"),
        help:
            "When the plain passcode logs in on the LAN: until-activated (once the cloud gave its grant key, only in the binding window; other logins need a grant) or always (GAgent's behaviour: a revoked user who kept the passcode keeps LAN control)."
    )
    var lanPasscode: LANPasscodeOption = .untilActivated

    @Option(
        name: .customLong("state-dir"),
        help: "A directory where each device keeps what a module keeps in flash (the cloud's LAN grant keys), so that a restarted device stays activated."
    )
    var stateDirectory: String?

    @Option(name: .long, help: "The LAN protocol the devices speak: gizwits (GAgent) or tuya.")
    var `protocol`: LANProtocol = .gizwits

    @Option(name: .customLong("version"), help: "With --protocol tuya: the Tuya protocol version, 3.1, 3.2, 3.3, 3.4 or 3.5.")
    var tuyaVersion: String = "3.3"

    @Option(name: .customLong("announce-interval"), help: "With --protocol tuya: seconds between announcements (Tuya devices: about 5).")
    var announceInterval: Double = 5

    @Option(
        name: .customLong("probe-port"),
        help: "With --protocol tuya --version 3.5: the UDP port REQ_DEVINFO probes are answered on (Tuya: 7000; 0 lets the system choose).")
    var probePort = 7000

    @Option(name: .customLong("tuya-port"), help: "With --protocol tuya: the TCP port (default 6668; 0 lets the system choose).")
    var tuyaPort = 6668

    @Option(name: .customLong("tuya-id"), help: "With --protocol tuya: the device id (gwId), for one device (default: random).")
    var tuyaID: String?

    @Option(
        name: .customLong("local-key"),
        help: "With --protocol tuya: the 16-character local key (or TETHER_TUYA_LOCAL_KEY; default: random, printed).")
    var localKey: String?

    @Option(name: .customLong("response-delay"), help: "With --protocol tuya: milliseconds every answer and push is held back (a slow device).")
    var responseDelay: Double = 0

    @Option(
        name: .customLong("go-dark-after"),
        help: "With --protocol tuya: after this many frames sent, send nothing for --dark-for seconds, then again (outages that repeat).")
    var goDarkAfter: Int?

    @Option(name: .customLong("dark-for"), help: "With --go-dark-after: seconds each outage lasts.")
    var darkFor: Double = 10

    @Flag(name: .customLong("lan"), inversion: .prefixedNo, help: "Serve the LAN protocol (--no-lan with --cloud: cloud only, up to 20,000 devices).")
    var lan = true

    @Flag(name: .long, help: "Print each device as a JSON line instead of text.")
    var json = false

    @Flag(name: .long, help: "Log protocol details to standard error.")
    var verbose = false

    func validate() throws {
        if `protocol` == .tuya {
            guard TuyaVersion(rawValue: tuyaVersion) != nil else { throw ValidationError("--version is 3.1, 3.2, 3.3, 3.4 or 3.5") }
            if let key = localKey ?? ProcessInfo.processInfo.environment["TETHER_TUYA_LOCAL_KEY"], key.utf8.count != 16 {
                throw ValidationError("--local-key is 16 characters")
            }
            if tuyaID != nil, count > 1 { throw ValidationError("--tuya-id names one device: leave it out with --count") }
            guard (0...65535).contains(tuyaPort) else { throw ValidationError("--tuya-port is 0 to 65535") }
            if let problem = problemWithSeconds(announceInterval, option: "--announce-interval", maximum: 3600, allowZero: false) {
                throw ValidationError(problem)
            }
            if let problem = problemWithSeconds(responseDelay / 1000, option: "--response-delay", maximum: 60, allowZero: true) {
                throw ValidationError(problem)
            }
            if let problem = problemWithSeconds(darkFor, option: "--dark-for", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
            if let goDarkAfter, goDarkAfter < 1 { throw ValidationError("--go-dark-after is 1 or more") }
        }
        guard count >= 1, count <= (lan ? 250 : 20_000) else { throw ValidationError("--count must be between 1 and \(lan ? 250 : 20_000)") }
        guard lan || cloud != nil else { throw ValidationError("--no-lan needs --cloud") }
        if provisioning != nil {
            guard count == 1 else { throw ValidationError("--provisioning runs one device") }
            guard (0...65535).contains(airlinkPort) else { throw ValidationError("--airlink-port is 0 to 65535") }
            if let airlinkAckPort, !(1...65535).contains(airlinkAckPort) { throw ValidationError("--airlink-ack-port is 1 to 65535") }
            if let airlinkKey, airlinkKey.utf8.count != 16 { throw ValidationError("--airlink-key is 16 characters") }
            guard (0...65535).contains(provPort) else { throw ValidationError("--prov-port is 0 to 65535") }
            guard (0...2).contains(provSecurity) else { throw ValidationError("--security is 0, 1 or 2") }
            guard [0, 1].contains(sec2PatchVersion) else { throw ValidationError("--sec2-patch-version is 0 or 1") }
        }
        if let problem = problemWithSeconds(joinDelay, option: "--join-delay", maximum: 600) { throw ValidationError(problem) }
        if let webConfigPort {
            guard softap else { throw ValidationError("--web-config-port goes with --softap") }
            guard (0...65535).contains(webConfigPort) else { throw ValidationError("--web-config-port is 0 to 65535") }
        }
        if let cloud, parseHostPort(cloud) == nil { throw ValidationError("--cloud takes HOST:PORT") }
        if (cloud == nil) != (credentials == nil) { throw ValidationError("--cloud and --credentials go together") }
        guard (30...1200).contains(keepAlive) else { throw ValidationError("--keep-alive is 30 to 1200 seconds") }
        guard FirmwareLimits.isName(firmwareVersion), firmwareVersion.utf8.count <= 32 else {
            throw ValidationError("--firmware-version is 1 to 32 printable characters without spaces or /")
        }
        if lan, count > 1, IPv4.parse(bind) == nil || bind == "0.0.0.0" {
            throw ValidationError("--count above 1 needs a specific IPv4 --bind address (devices get consecutive addresses), e.g. --bind 127.0.0.1")
        }
        if let problem = problemWithSeconds(interval, option: "--interval", maximum: 3600) { throw ValidationError(problem) }
        if let problem = problemWithSeconds(idleTimeout, option: "--idle-timeout", maximum: 86_400, allowZero: false) { throw ValidationError(problem) }
        if let announce, announce != "none", parseHostPort(announce) == nil {
            throw ValidationError("--announce takes HOST:PORT or none")
        }
    }

    func run() async throws {
        let model = try loadProduct(product)
        var logger = Logger(label: "tether.agent")
        logger.logLevel = verbose ? .debug : .info
        // The network onboarding joins, whichever the mode.
        var simulated = try wifiNetworks.map { try SimulatedRouter(json: Array(try Data(contentsOf: URL(fileURLWithPath: $0)))) } ?? SimulatedRouter()
        simulated.faults = SimulatedRouter.Faults(
            joinDelay: .milliseconds(Int64(joinDelay * 1000)), refuseJoin: routerFaults.contains(.refuseJoin), dhcpTimeout: routerFaults.contains(.dhcpTimeout),
            goneNetworks: Set(goneNetworks))
        let router: any WiFiStation =
            wifiBackend == .networkmanager ? NetworkManagerStation(interface: wifiInterface, logger: logger) : simulated
        var generator = SplitMix64(seed: seed ?? UInt64.random(in: 0...UInt64.max))
        let cloudIdentities = try credentials.map { try Self.loadCredentials($0) } ?? []
        if cloud != nil, cloudIdentities.count < count {
            throw ValidationError("--credentials has \(cloudIdentities.count) devices, --count asks for \(count)")
        }
        var devices: [VirtualDevice] = []
        var servers: [LANDeviceServer?] = []
        var tuyaServers: [TuyaDeviceServer] = []
        var links: [CloudLink?] = []
        for index in 0..<count {
            var identity = DeviceIdentity.random(productKey: model.productKey.isEmpty ? "tether-product" : model.productKey, using: &generator)
            identity.firmwareVersion = firmwareVersion
            if cloud != nil {
                // The LAN shows the identity the cloud knows, so apps see one device on both paths.
                cloudIdentities[index].lan.apply(to: &identity)
                identity.productKey = cloudIdentities[index].device.productKey
            }
            let trust = LANGrantTrust(passcodeLogins: lanPasscode.policy, keyFile: stateDirectory.map { "\($0)/\(identity.did).lan-keys" })
            let device = try VirtualDevice(model: model, identity: identity, bindable: bindable, onboarding: softap || provisioning != nil, lanGrants: trust)
            devices.append(device)
            if lan, `protocol` == .tuya {
                let host = count == 1 ? bind : IPv4.parse(bind)!.adding(index).description
                let key = localKey ?? ProcessInfo.processInfo.environment["TETHER_TUYA_LOCAL_KEY"] ?? Self.randomKey(using: &generator)
                var configuration = try TuyaDeviceConfiguration(
                    host: host, port: tuyaPort, deviceID: tuyaID ?? Self.randomTuyaID(using: &generator), localKey: Array(key.utf8),
                    version: TuyaVersion(rawValue: tuyaVersion)!, idleTimeout: .milliseconds(Int(max(idleTimeout, 30) * 1000)),
                    announcementTarget: announce.map { $0 == "none" ? .some(nil) : .some(parseHostPort($0)) } ?? .none,
                    announcementInterval: .milliseconds(Int(announceInterval * 1000)), probePort: probePort)
                configuration.faults = TuyaFaults(
                    responseDelay: .milliseconds(Int64(responseDelay)), goDarkAfter: goDarkAfter, darkFor: .milliseconds(Int64(darkFor * 1000)))
                tuyaServers.append(TuyaDeviceServer(device: device, configuration: configuration, logger: logger))
                servers.append(nil)
            } else if lan {
                let host = count == 1 ? bind : IPv4.parse(bind)!.adding(index).description
                let target: (host: String, port: Int)?? = announce.map { $0 == "none" ? .some(nil) : .some(parseHostPort($0)) } ?? .none
                let configuration = LANDeviceConfiguration(
                    host: host, udpPort: udpPort, tcpPort: tcpPort, announcementTarget: target,
                    idleTimeout: .milliseconds(Int(idleTimeout * 1000)), router: router, webConfigPort: softap ? webConfigPort : nil
                )
                servers.append(LANDeviceServer(device: device, configuration: configuration, logger: logger))
            } else {
                servers.append(nil)
            }
            if let cloud, let address = parseHostPort(cloud) {
                let credential = cloudIdentities[index]
                let configuration = AlinkDeviceConfiguration(
                    host: address.host, port: address.port, device: credential.device, deviceSecret: credential.secret, keepAlive: keepAlive
                )
                let faults = FirmwareFaults(badChecksum: otaFaults.contains(.badChecksum), interruptAt: otaFaults.contains(.interrupt) ? 0.5 : nil)
                links.append(CloudLink(device: device, configuration: configuration, firmwareFaults: faults, logger: logger))
            } else {
                links.append(nil)
            }
        }
        let simulationSeed = generator.next()
        let interval = self.interval
        let json = self.json
        let quiet = count > 50
        let serverLogger = logger
        let printedKey = localKey == nil && ProcessInfo.processInfo.environment["TETHER_TUYA_LOCAL_KEY"] == nil
        let espServer =
            provisioning == .espIDF
            ? ESPProvisioningServer(
                device: devices[0],
                configuration: ESPProvisioningConfiguration(
                    host: bind, port: provPort, security: provSecurity, pop: Array((pop ?? "").utf8), sec2Username: sec2Username ?? "wifiprov",
                    sec2Password: sec2Password ?? "abcd1234", sec2PatchVersion: sec2PatchVersion, router: router),
                logger: logger) : nil
        let smartConfig = provisioning.flatMap { $0 == .airlink ? $0 : nil }.map { _ in
            SmartConfigListener(
                device: devices[0],
                configuration: SmartConfigListenerConfiguration(
                    host: bind, port: airlinkPort, acknowledgementPort: airlinkAckPort, espTouchV2Key: airlinkKey.map { Array($0.utf8) }),
                logger: logger)
        }
        try await runUntilTerminated { [devices, servers, links, tuyaServers] in
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let espServer {
                    group.addTask { try await espServer.run() }
                    let port = try await espServer.port()
                    if json {
                        printJSON(["provisioning": "esp-idf", "host": .string(bind), "port": .int(Int64(port)), "security": .int(Int64(provSecurity))])
                    } else {
                        printLine("ESP-IDF provisioning: http://\(bind):\(port) security \(provSecurity)")
                    }
                }
                if let smartConfig {
                    group.addTask {
                        try await smartConfig.run()
                        // Configured: the device goes on serving until the agent stops.
                        try await Task.sleep(for: .seconds(365 * 86_400))
                    }
                    let port = try await smartConfig.port()
                    if json {
                        printJSON(["provisioning": "airlink", "host": .string(bind), "port": .int(Int64(port))])
                    } else {
                        printLine("smart config: UDP \(bind):\(port)")
                    }
                }
                for (index, device) in devices.enumerated() {
                    if let link = links[index] { group.addTask { await link.run() } }
                    if !quiet { group.addTask { await Self.report(device, index: index + 1) } }
                    if interval > 0 {
                        let simulator = DeviceSimulator(device: device, interval: .milliseconds(Int(interval * 1000)), seed: simulationSeed &+ UInt64(index))
                        group.addTask { await simulator.run() }
                    }
                }
                let lanServers = servers.compactMap { $0 }
                if !lanServers.isEmpty { group.addTask { await LANSwitch.serve(lanServers, logger: serverLogger) } }
                if !tuyaServers.isEmpty { group.addTask { await LANSwitch.serve(tuyaServers, logger: serverLogger) } }
                for (index, server) in tuyaServers.enumerated() {
                    Self.printTuyaDevice(
                        server, port: try await server.port(), probePort: await server.probePort(), index: index + 1, showKey: printedKey, json: json)
                }
                for (index, device) in devices.enumerated() where tuyaServers.isEmpty {
                    let addresses = try await servers[index]?.addresses()
                    Self.printDevice(device, addresses: addresses, cloud: links[index]?.configuration.device, index: index + 1, json: json)
                }
                try await group.next()
            }
        }
    }

    static func printTuyaDevice(_ server: TuyaDeviceServer, port: Int, probePort: Int?, index: Int, showKey: Bool, json: Bool) {
        let configuration = server.configuration
        if json {
            var object: JSONObject = [
                "device": .int(Int64(index)), "protocol": "tuya", "id": .string(configuration.deviceID), "host": .string(configuration.host),
                "port": .int(Int64(port)), "version": .string(configuration.version.rawValue),
            ]
            if let probePort { object["probePort"] = .int(Int64(probePort)) }
            // A key the simulator made up is printed, so that clients can use it; a given one is not repeated.
            if showKey { object["localKey"] = .string(String(decoding: configuration.localKey, as: UTF8.self)) }
            printJSON(.object(object))
        } else {
            var line = "device \(index): tuya \(configuration.version) id=\(configuration.deviceID) tcp=\(configuration.host):\(port)"
            if showKey { line += " local-key=\(String(decoding: configuration.localKey, as: UTF8.self))" }
            printLine(line)
        }
    }

    static func randomKey(using generator: inout SplitMix64) -> String {
        let characters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<16).map { _ in characters.randomElement(using: &generator)! })
    }

    static func randomTuyaID(using generator: inout SplitMix64) -> String {
        let characters = Array("abcdef0123456789")
        return "eb" + String((0..<20).map { _ in characters.randomElement(using: &generator)! })
    }

    /// `{productKey, deviceName, deviceSecret}` objects: one, a list, or one per line.
    static func loadCredentials(_ path: String) throws -> [(device: AlinkDeviceIdentity, secret: String, lan: LANIdentity)] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let values: [JSONValue]
        if let document = try? JSONValue.parse(text) {
            values = document.arrayValue ?? [document]
        } else {
            values = try text.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }.map { try JSONValue.parse(String($0)) }
        }
        return try values.map { value in
            guard let productKey = value["productKey"]?.stringValue, let deviceName = value["deviceName"]?.stringValue,
                let secret = value["deviceSecret"]?.stringValue
            else {
                throw ValidationError("each credential needs productKey, deviceName and deviceSecret")
            }
            let lan = try LANIdentity(did: value["did"]?.stringValue, passcode: value["passcode"]?.stringValue, mac: value["mac"]?.stringValue)
            return (try AlinkDeviceIdentity(productKey: productKey, deviceName: deviceName), secret, lan)
        }
    }

    static func printDevice(_ device: VirtualDevice, addresses: LANDeviceAddresses?, cloud: AlinkDeviceIdentity?, index: Int, json: Bool) {
        let identity = device.identity
        if json {
            var object = JSONObject()
            object["device"] = .int(Int64(index))
            object["did"] = .string(identity.did)
            object["mac"] = .string(identity.macString)
            object["passcode"] = .string(identity.passcode)
            object["productKey"] = .string(identity.productKey)
            if let addresses {
                object["host"] = .string(addresses.host)
                object["udpPort"] = .int(Int64(addresses.udpPort))
                object["tcpPort"] = .int(Int64(addresses.tcpPort))
                if let web = addresses.webConfigPort { object["webConfigPort"] = .int(Int64(web)) }
            }
            if let cloud { object["cloudDevice"] = .string(cloud.description) }
            printJSON(.object(object))
        } else {
            var line = "device \(index): did=\(identity.did) mac=\(identity.macString) passcode=\(identity.passcode) product=\(identity.productKey)"
            if let addresses { line += " udp=\(addresses.host):\(addresses.udpPort) tcp=\(addresses.host):\(addresses.tcpPort)" }
            if let web = addresses?.webConfigPort { line += " web_config=\(addresses!.host):\(web)" }
            if let cloud { line += " cloud=\(cloud)" }
            printLine(line)
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
            case .paired(let code, let message): line = code == 200 ? "paired: bound to the token's user" : "pairing refused (\(code)): \(message)"
            case .cloudConnected: line = "connected to the cloud"
            case .cloudUnreachable(let reason): line = "cloud unreachable: \(reason)"
            case .serviceCalled(let identifier, let params): line = "service \(identifier) called by the cloud with \(params.serialized())"
            case .upgradeStarted(let version): line = "downloading firmware \(version)"
            case .upgraded(let version): line = "upgraded to firmware \(version)"
            case .upgradeFailed(let step, let reason): line = "upgrade failed (step \(step)): \(reason)"
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

/// `--wifi-backend`.
enum WiFiBackendOption: String, ExpressibleByArgument, CaseIterable {
    case simulated
    case networkmanager
}

/// `--router-fault`.
enum RouterFaultOption: String, ExpressibleByArgument, CaseIterable {
    case refuseJoin = "refuse-join"
    case dhcpTimeout = "dhcp-timeout"
}

/// `--provisioning`.
enum ProvisioningMode: String, ExpressibleByArgument, CaseIterable {
    case airlink
    case espIDF = "esp-idf"
}

/// `--protocol`.
enum LANProtocol: String, ExpressibleByArgument, CaseIterable {
    case gizwits
    case tuya
}

/// `--lan-passcode`.
enum LANPasscodeOption: String, ExpressibleByArgument, CaseIterable {
    case always
    case untilActivated = "until-activated"

    var policy: LANGrantTrust.PasscodeLogins { self == .always ? .always : .untilActivated }
}

/// Upgrade failures the simulator can inject (`--ota-fault`).
enum OTAFault: String, ExpressibleByArgument, CaseIterable {
    case badChecksum = "bad-checksum"
    case interrupt
}

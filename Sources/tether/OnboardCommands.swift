import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

/// `tether onboard …`: putting a new device on the user's Wi-Fi.
struct OnboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboard", abstract: "Put a new device on a Wi-Fi network.", subcommands: [AirLink.self, ESP.self, SoftAP.self, Token.self])

    /// `tether onboard esp`: ESP-IDF provisioning over the device's access point.
    struct ESP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "esp", abstract: "ESP-IDF wifi_provisioning over SoftAP HTTP: the handshake, the credentials, and the device's join.")

        @Option(help: "The device's provisioning server, HOST:PORT (on its access point: 192.168.4.1:80).") var device = "192.168.4.1:80"
        @Option(help: "protocomm security: 0, 1 or 2.") var security = 1
        @Option(help: "Security 1: the proof of possession.") var pop: String?
        @Option(name: .customLong("sec2-username"), help: "Security 2: the SRP username.") var sec2Username: String?
        @Option(name: .customLong("sec2-password"), help: "Security 2: the SRP password.") var sec2Password: String?
        @Option(name: .customLong("wifi-ssid"), help: "The network to join.") var wifiSSID: String?
        @Flag(help: "List the networks the device hears (strongest first) instead of provisioning.") var scan = false
        @Option(name: .customLong("wifi-password"), help: "Its password (empty for an open network).") var wifiPassword = ""
        @Option(help: "Seconds the device may take to join.") var timeout: Double = 60
        @Option(help: "Write the attempt's flight recorder (JSON, without secrets) to this file.") var trace: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var pairing: PairingOptions

        func validate() throws {
            guard parseHostPort(device) != nil else { throw ValidationError("--device takes HOST:PORT") }
            guard (0...2).contains(security) else { throw ValidationError("--security is 0, 1 or 2") }
            if security == 2, sec2Username == nil || sec2Password == nil { throw ValidationError("--security 2 needs --sec2-username and --sec2-password") }
            if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 600, allowZero: false) { throw ValidationError(problem) }
            guard scan || wifiSSID != nil else { throw ValidationError("--wifi-ssid names the network (or --scan lists them)") }
        }

        func run() async throws {
            let address = parseHostPort(device)!
            let options = ESPProvisioningOptions(
                device: LANEndpoint(host: address.host, port: address.port), security: security, pop: pop, sec2Username: sec2Username,
                sec2Password: sec2Password, joinTimeout: .milliseconds(Int64(timeout * 1000)))
            let json = self.json
            if scan { return try await listNetworks(options) }
            if pairing.pair {
                return try await pairing.run(.espIDF(options), ssid: wifiSSID ?? "", password: wifiPassword, json: json, trace: trace)
            }
            let outcome = await OnboardCommand.attempt(json: json) { progress throws(OnboardingFailure) in
                try await ESPProvisioning.run(ssid: Array((wifiSSID ?? "").utf8), password: Array(wifiPassword.utf8), options: options, progress: progress)
            }
            switch outcome {
            case .success(let result):
                try OnboardCommand.write(result.trace, to: trace)
                if json { printJSON(["ip": .string(result.ip), "state": "connected"]) } else { printLine("connected: the device is at \(result.ip)") }
            case .failure(let failure):
                try OnboardCommand.write(failure.trace, to: trace)
                try OnboardCommand.failed(failure, json: json)
            }
        }

        private func listNetworks(_ options: ESPProvisioningOptions) async throws {
            let networks: [ESPWiFiNetwork]
            do throws(OnboardingFailure) {
                networks = try await ESPProvisioning.scan(options: options)
            } catch {
                try OnboardCommand.write(error.trace, to: trace)
                try OnboardCommand.failed(error, json: json)
            }
            if json {
                printJSON(
                    .array(
                        networks.map {
                            [
                                "ssid": .string(String(decoding: $0.ssid, as: UTF8.self)), "rssi": .int(Int64($0.rssi)), "channel": .int(Int64($0.channel)),
                                "auth": .int(Int64($0.auth.rawValue)),
                            ]
                        }))
            } else {
                for network in networks { printLine("\(String(decoding: network.ssid, as: UTF8.self))  \(network.rssi) dBm  channel \(network.channel)") }
            }
        }
    }

    /// `tether onboard softap`: a GAgent device on its own access point.
    struct SoftAP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "softap", abstract: "GAgent SoftAP: 0x0001 with the credentials to the device's access point, then its announcement on the router.")

        @Option(help: "The device on its access point, HOST:PORT (GAgent: 10.10.100.254:12414).") var device = "10.10.100.254:12414"
        @Option(help: "The local address to send from and listen on.") var listen = "0.0.0.0"
        @Option(name: .customLong("announcement-port"), help: "Where the device announces itself once joined (GAgent: 2415).") var announcementPort = 2415
        @Flag(name: .customLong("no-wait"), help: "Return at the device's 0x0002, without waiting for its announcement.") var noWait = false
        @Option(
            name: .customLong("web-config-port"),
            help: "Send the credentials to GAgent's web_config.cgi on this TCP port of the device (GAgent: 80) instead of 0x0001.")
        var webConfigPort: Int?
        @Option(name: .customLong("wifi-ssid"), help: "The network to join.") var wifiSSID: String
        @Option(name: .customLong("wifi-password"), help: "Its password (at most 32 bytes for GAgent).") var wifiPassword = ""
        @Option(help: "Seconds to wait for the device's answer, and again for its announcement.") var timeout: Double = 15
        @Option(help: "Write the attempt's flight recorder (JSON, without secrets) to this file.") var trace: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var pairing: PairingOptions

        func validate() throws {
            guard parseHostPort(device) != nil else { throw ValidationError("--device takes HOST:PORT") }
            guard (1...65535).contains(announcementPort) else { throw ValidationError("--announcement-port is 1 to 65535") }
            if let webConfigPort, !(1...65535).contains(webConfigPort) { throw ValidationError("--web-config-port is 1 to 65535") }
            if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 600, allowZero: false) { throw ValidationError(problem) }
        }

        func run() async throws {
            let address = parseHostPort(device)!
            let seconds = Duration.milliseconds(Int64(timeout * 1000))
            var options = SoftAPOptions(
                device: LANEndpoint(host: address.host, port: address.port), listenHost: listen, announcementPort: noWait ? nil : announcementPort,
                answerTimeout: seconds, announcementTimeout: seconds)
            options.webConfigPort = webConfigPort
            let json = self.json
            if pairing.pair { return try await pairing.run(.softAP(options), ssid: wifiSSID, password: wifiPassword, json: json, trace: trace) }
            let outcome = await OnboardCommand.attempt(json: json) { progress throws(OnboardingFailure) in
                try await SoftAPOnboarding.run(ssid: wifiSSID, password: wifiPassword, options: options, progress: progress)
            }
            switch outcome {
            case .success(let result):
                try OnboardCommand.write(result.trace, to: trace)
                var object: JSONObject = [:]
                if let did = result.did { object["did"] = .string(did) }
                if let mac = result.mac { object["mac"] = .string(mac) }
                if let productKey = result.productKey { object["productKey"] = .string(productKey) }
                if let ip = result.ip { object["ip"] = .string(ip) }
                object["state"] = .string(result.did == nil ? "acknowledged" : "seen_on_lan")
                if json { printJSON(.object(object)) } else { printLine("device \(result.did ?? "(not yet seen)") \(result.ip ?? "")") }
            case .failure(let failure):
                try OnboardCommand.write(failure.trace, to: trace)
                try OnboardCommand.failed(failure, json: json)
            }
        }
    }

    /// Runs one onboarding attempt, its steps on the terminal unless printing JSON.
    static func attempt<Outcome>(
        json: Bool, _ body: (@escaping @Sendable (OnboardingStep) -> Void) async throws(OnboardingFailure) -> Outcome
    ) async -> Result<Outcome, OnboardingFailure> {
        do throws(OnboardingFailure) {
            return .success(try await body { step in if !json { printLine("… \(step.rawValue)") } })
        } catch {
            return .failure(error)
        }
    }

    static func write(_ trace: OnboardingTrace, to path: String?) throws {
        guard let path else { return }
        try Data(trace.json.serializedBytes()).write(to: URL(fileURLWithPath: path))
    }

    static func failed(_ failure: OnboardingFailure, json: Bool) throws -> Never {
        if json {
            printJSON(["message": .string(failure.error.message), "step": .string(failure.step.rawValue), "code": .string(failure.error.code.name)])
        } else {
            printError("\(failure)")
        }
        throw ExitCode(1)
    }

    /// `tether onboard airlink`: the smart-config encodings (ESP-Touch v1/v2, AirKiss).
    struct AirLink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "airlink",
            abstract: "Smart config: the UDP datagram lengths that carry the network's SSID and password to a device listening on the air.",
            discussion: """
                With --dry-run, prints what the phone would send, with the keys of airlink-vectors.json: guide and \\
                datum (esptouch-v1), packets (esptouch-v2), lengths (airkiss).
                """)

        enum Encoding: String, ExpressibleByArgument, CaseIterable {
            case esptouchV1 = "esptouch-v1"
            case esptouchV2 = "esptouch-v2"
            case airkiss
        }

        @Option(help: "esptouch-v1, esptouch-v2 or airkiss.") var encoding: Encoding
        @Option(name: .customLong("ssid-hex"), help: "The SSID's bytes in hex (any encoding).") var ssidHex: String
        @Option(name: .customLong("password-hex"), help: "The password's bytes in hex (empty for an open network).") var passwordHex = ""
        @Option(help: "The access point's BSSID, aa:bb:cc:dd:ee:ff.") var bssid = "00:00:00:00:00:00"
        @Option(help: "ESP-Touch v1: the phone's IPv4 address, where the device answers.") var ip = "0.0.0.0"
        @Flag(name: .customLong("ssid-visible"), help: "ESP-Touch v1: leave the SSID out, as old encoders did for visible networks.")
        var ssidVisible = false
        @Option(name: .customLong("reserved-hex"), help: "ESP-Touch v2: custom data for the device, in hex.") var reservedHex = ""
        @Option(name: .customLong("aes-key"), help: "ESP-Touch v2: a 16-character key: password and custom data travel encrypted.")
        var aesKey: String?
        @Option(name: .customLong("port-index"), help: "ESP-Touch v2: which app port (0-3: 18266, 28266, 38266, 48266).") var portIndex = 0
        @Option(help: "AirKiss: the random byte (0-126) the device echoes; default random.") var random: Int?
        @Flag(name: .customLong("dry-run"), help: "Print the lengths instead of sending them.") var dryRun = false
        @Option(help: "Where the datagrams go, HOST:PORT (default: 255.255.255.255 at the encoding's port).") var target: String?
        @Option(help: "The local address to send from and listen on.") var listen = "0.0.0.0"
        @Option(name: .customLong("ack-port"), help: "Where the device's answer arrives (default: the encoding's).") var ackPort: Int?
        @Option(name: .customLong("interval-ms"), help: "Milliseconds between datagrams (default: the vendors' apps' pace).") var intervalMilliseconds: Double?
        @Option(help: "Seconds to keep sending before giving up.") var timeout: Double = 60
        @Option(help: "Write the attempt's flight recorder (JSON, without secrets) to this file.") var trace: String?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard [UInt8](tetherHex: ssidHex) != nil, [UInt8](tetherHex: passwordHex) != nil, [UInt8](tetherHex: reservedHex) != nil else {
                throw ValidationError("--ssid-hex, --password-hex and --reserved-hex take hex bytes")
            }
            guard MACAddress.bytes(bssid)?.count == 6 else { throw ValidationError("--bssid takes aa:bb:cc:dd:ee:ff") }
            guard Self.ipv4(ip) != nil else { throw ValidationError("--ip takes an IPv4 address") }
            if let random, !(0...126).contains(random) { throw ValidationError("--random is 0 to 126") }
            guard (0...3).contains(portIndex) else { throw ValidationError("--port-index is 0 to 3") }
            if let aesKey, aesKey.utf8.count != 16 { throw ValidationError("--aes-key is 16 characters") }
            if let target, parseHostPort(target) == nil { throw ValidationError("--target takes HOST:PORT") }
            if let ackPort, !(1...65535).contains(ackPort) { throw ValidationError("--ack-port is 1 to 65535") }
            if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 600, allowZero: false) { throw ValidationError(problem) }
            if let intervalMilliseconds, !(0...1000).contains(intervalMilliseconds) { throw ValidationError("--interval-ms is 0 to 1000") }
        }

        static func ipv4(_ text: String) -> [UInt8]? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
            guard parts.count == 4, parts.allSatisfy({ $0 != nil }) else { return nil }
            return parts.map { $0! }
        }

        func run() async throws {
            let credentials = try SmartConfigCredentials(
                ssid: [UInt8](tetherHex: ssidHex)!, password: [UInt8](tetherHex: passwordHex)!, bssid: MACAddress.bytes(bssid)!)
            guard dryRun else { return try await send(credentials) }
            var output = JSONObject()
            switch encoding {
            case .esptouchV1:
                let hidden = !ssidVisible
                let phoneIP = Self.ipv4(ip)!
                output["guide"] = .array(ESPTouchV1.guide.map { .int(Int64($0)) })
                output["datum"] = .array(try ESPTouchV1.datum(credentials, phoneIP: phoneIP, hidden: hidden).map { .int(Int64($0)) })
                output["data_hex"] = .string(try ESPTouchV1.dataBytes(credentials, phoneIP: phoneIP, hidden: hidden).tetherHex)
            case .esptouchV2:
                let options = ESPTouchV2.Options(reserved: [UInt8](tetherHex: reservedHex)!, aesKey: aesKey.map { Array($0.utf8) }, portMark: portIndex)
                output["head_hex"] = .string(try ESPTouchV2.head(credentials, options: options).tetherHex)
                output["packets"] = .array(try ESPTouchV2.packets(credentials, options: options).map { .int(Int64($0)) })
            case .airkiss:
                let random = UInt8(random ?? Int.random(in: 0...126))
                output["random"] = .int(Int64(random))
                output["magic"] = .array(AirKiss.magicCode(credentials).map { .int(Int64($0)) })
                output["prefix"] = .array(AirKiss.prefixCode(credentials).map { .int(Int64($0)) })
                output["lengths"] = .array(try AirKiss.lengths(credentials, random: random).map { .int(Int64($0)) })
            }
            if json {
                printJSON(.object(output))
            } else {
                for key in output.keys { printLine("\(key): \((output[key] ?? .null).serialized())") }
            }
        }

        private func send(_ credentials: SmartConfigCredentials) async throws {
            let encoding: SmartConfigEncoding =
                switch self.encoding {
                case .esptouchV1: .espTouchV1
                case .esptouchV2: .espTouchV2
                case .airkiss: .airKiss
                }
            let endpoint = target.flatMap(parseHostPort).map { LANEndpoint(host: $0.host, port: $0.port) }
            let options = SmartConfigOptions(
                encoding: encoding, target: endpoint, phoneIP: Self.ipv4(ip)!, listenHost: listen, acknowledgementPort: ackPort, ssidVisible: ssidVisible,
                espTouchV2: ESPTouchV2.Options(reserved: [UInt8](tetherHex: reservedHex)!, aesKey: aesKey.map { Array($0.utf8) }, portMark: portIndex),
                airKissRandom: random.map { UInt8($0) }, interval: intervalMilliseconds.map { .microseconds(Int64($0 * 1000)) },
                timeout: .milliseconds(Int64(timeout * 1000)))
            let json = self.json
            let outcome = await OnboardCommand.attempt(json: json) { progress throws(OnboardingFailure) in
                try await SmartConfig.run(credentials, options: options, progress: progress)
            }
            switch outcome {
            case .success(let result):
                try OnboardCommand.write(result.trace, to: trace)
                if json {
                    printJSON(["state": "acknowledged", "ip": .string(result.ip), "mac": result.mac.map(JSONValue.string) ?? .null])
                } else {
                    printLine("device acknowledged: \(result.ip)\(result.mac.map { " (\($0))" } ?? "")")
                }
            case .failure(let failure):
                try OnboardCommand.write(failure.trace, to: trace)
                if json {
                    printJSON([
                        "state": "failed", "step": .string(failure.step.rawValue), "code": .string(failure.error.code.name),
                        "message": .string(failure.error.message),
                    ])
                } else {
                    printError("\(failure)")
                }
                throw ExitCode(1)
            }
        }

    }
}

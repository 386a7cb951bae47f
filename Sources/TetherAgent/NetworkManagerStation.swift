import Foundation
public import Logging
public import TetherCore

/// A real Wi-Fi station on Linux, through NetworkManager's command line (`nmcli`): what a Linux
/// device running the agent uses instead of the ``SimulatedRouter``
/// (`tether-agent simulate --wifi-backend networkmanager [--wifi-interface IF]`).
///
/// The password goes to `nmcli --ask` on its standard input, never on a command line (which
/// other users can read). Outcomes are read from nmcli's exit status and message: 10 (no such
/// network) → network not found; "Secrets were required" / "802-1x supplicant" → wrong password;
/// "IP configuration could not be reserved" → no address; any other failure → join refused.
///
/// Not exercised by the test suite: CI has no Wi-Fi hardware and no NetworkManager.
public struct NetworkManagerStation: WiFiStation {
    /// nmcli's path.
    public var nmcli: String
    /// The Wi-Fi interface (`wlan0`); nil lets NetworkManager choose.
    public var interface: String?
    /// How long a join may take (`nmcli --wait`).
    public var joinTimeout: Duration
    let logger: Logger

    public init(
        nmcli: String = "/usr/bin/nmcli", interface: String? = nil, joinTimeout: Duration = .seconds(45), logger: Logger = Logger(label: "tether.agent.wifi")
    ) {
        self.nmcli = nmcli
        self.interface = interface
        self.joinTimeout = joinTimeout
        self.logger = logger
    }

    public func scan() async throws(TetherError) -> [WiFiNetwork] {
        var arguments = ["--terse", "--fields", "SSID,SIGNAL,CHAN,SECURITY", "device", "wifi", "list", "--rescan", "yes"]
        if let interface { arguments += ["ifname", interface] }
        let output = await Self.run(nmcli, arguments)
        guard output.status == 0 else { throw TetherError(.connectionFailed, "nmcli could not scan: \(output.standardError)") }
        return Self.parseList(output.standardOutput)
    }

    public func join(ssid: String, password: String) async -> WiFiJoinResult {
        let (seconds, _) = joinTimeout.components
        var arguments = ["--ask", "--wait", String(max(seconds, 1)), "device", "wifi", "connect", ssid]
        if let interface { arguments += ["ifname", interface] }
        let output = await Self.run(nmcli, arguments, input: password.isEmpty ? "" : password + "\n")
        let result = Self.joinResult(status: output.status, message: output.standardError + output.standardOutput)
        guard case .joined = result else {
            logger.notice("NetworkManager could not join", metadata: ["tether.ssid": "\(ssid)", "tether.result": "\(result)"])
            return result
        }
        var show = ["--get-values", "IP4.ADDRESS", "device", "show"]
        if let interface { show.append(interface) }
        let address = await Self.run(nmcli, show).standardOutput.split(separator: "\n").first.map { String($0.prefix { $0 != "/" }) } ?? ""
        return address.isEmpty ? .noAddress : .joined(ip: address)
    }

    /// `SSID:SIGNAL:CHAN:SECURITY` lines, `\:` escaping colons; signal (0–100 %) as dBm.
    static func parseList(_ text: String) -> [WiFiNetwork] {
        var networks: [String: WiFiNetwork] = [:]
        for line in text.split(separator: "\n") {
            var fields: [String] = [""]
            var escaped = false
            for character in line {
                if escaped {
                    fields[fields.count - 1].append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == ":" {
                    fields.append("")
                } else {
                    fields[fields.count - 1].append(character)
                }
            }
            guard fields.count >= 4, !fields[0].isEmpty, let signal = Int(fields[1]), let channel = Int(fields[2]) else { continue }
            let network = WiFiNetwork(ssid: fields[0], rssi: signal / 2 - 100, channel: channel, secured: !fields[3].isEmpty && fields[3] != "--")
            if let known = networks[network.ssid], known.rssi >= network.rssi { continue }
            networks[network.ssid] = network
        }
        return networks.values.sorted { $0.rssi > $1.rssi }
    }

    static func joinResult(status: Int32, message: String) -> WiFiJoinResult {
        if status == 0 { return .joined(ip: "") }
        if status == 10 || message.contains("No network with SSID") { return .networkNotFound }
        if message.contains("Secrets were required") || message.contains("802-1x supplicant") { return .wrongPassword }
        if message.contains("IP configuration could not be reserved") || message.contains("DHCP") { return .noAddress }
        return .joinRefused
    }

    struct Output: Sendable {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs a process to its end without blocking a thread of the caller's executor.
    static func run(_ executable: String, _ arguments: [String], input: String? = nil) async -> Output {
        await withCheckedContinuation { continuation in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            let error = Pipe()
            let stdin = Pipe()
            process.standardOutput = output
            process.standardError = error
            process.standardInput = stdin
            process.terminationHandler = { process in
                let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                let err = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                continuation.resume(returning: Output(status: process.terminationStatus, standardOutput: out, standardError: err))
            }
            do {
                try process.run()
            } catch {
                continuation.resume(returning: Output(status: 127, standardOutput: "", standardError: "cannot run \(executable): \(error)"))
                return
            }
            if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
            try? stdin.fileHandleForWriting.close()
        }
    }
}

import Foundation
import Synchronization
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
        let output = await Self.run(nmcli, arguments, timeout: .seconds(30))
        guard output.status == 0 else { throw TetherError(.connectionFailed, "nmcli could not scan: \(output.standardError)") }
        return Self.parseList(output.standardOutput)
    }

    public func join(ssid: String, password: String) async -> WiFiJoinResult {
        let (seconds, _) = joinTimeout.components
        var arguments = ["--ask", "--wait", String(max(seconds, 1)), "device", "wifi", "connect", ssid]
        if let interface { arguments += ["ifname", interface] }
        let output = await Self.run(nmcli, arguments, input: password.isEmpty ? "" : password + "\n", timeout: joinTimeout + .seconds(5))
        let result = Self.joinResult(status: output.status, message: output.standardError + output.standardOutput)
        guard case .joined = result else {
            logger.notice("NetworkManager could not join", metadata: ["tether.ssid": "\(ssid)", "tether.result": "\(result)"])
            return result
        }
        // The Wi-Fi device's own address, not the first of every device's.
        guard let device = await wifiDevice() else { return .noAddress }
        let shown = await Self.run(nmcli, ["--get-values", "IP4.ADDRESS", "device", "show", device], timeout: .seconds(10))
        let address = shown.standardOutput.split(separator: "\n").first.map { String($0.prefix { $0 != "/" }) } ?? ""
        return address.isEmpty ? .noAddress : .joined(ip: address)
    }

    /// The configured interface, or the first Wi-Fi device NetworkManager lists.
    func wifiDevice() async -> String? {
        if let interface { return interface }
        let listed = await Self.run(nmcli, ["--terse", "--fields", "DEVICE,TYPE", "device"], timeout: .seconds(10))
        return Self.firstWiFiDevice(listed.standardOutput)
    }

    /// `DEVICE:TYPE` lines: the first of type `wifi`.
    static func firstWiFiDevice(_ text: String) -> String? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            if fields.count >= 2, fields[1] == "wifi" { return String(fields[0]) }
        }
        return nil
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

    /// Runs a process to its end on a thread of its own (Foundation's blocking calls must not hold
    /// the cooperative pool): both outputs read as they come (a full pipe would stall it), killed
    /// at `timeout` or when the caller is cancelled.
    static func run(_ executable: String, _ arguments: [String], input: String? = nil, timeout: Duration) async -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        return await withTaskCancellationHandler {
            await withTaskGroup(of: Output?.self) { group in
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread { continuation.resume(returning: runBlocking(process, executable: executable, input: input)) }.start()
                    }
                }
                group.addTask {
                    // Ended by the run's own end (cancelled), or past its time (kills it).
                    do { try await Task.sleep(for: timeout) } catch { return nil }
                    Self.stop(process)
                    return nil
                }
                var result = Output(status: 127, standardOutput: "", standardError: "")
                for await finished in group {
                    guard let finished else { continue }
                    result = finished
                    group.cancelAll()
                }
                return result
            }
        } onCancel: {
            Self.stop(process)
        }
    }

    /// SIGKILL by pid: Foundation's `isRunning` is not kept up to date off its run loop on Linux, and a
    /// child may start with SIGTERM blocked (it inherits the launching thread's signal mask).
    private static func stop(_ process: Process) {
        let pid = process.processIdentifier
        if pid > 0 { kill(pid, SIGKILL) }
    }

    private static func runBlocking(_ process: Process, executable: String, input: String?) -> Output {
        let (output, error, stdin) = (Pipe(), Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        do {
            try process.run()
        } catch {
            return Output(status: 127, standardOutput: "", standardError: "cannot run \(executable): \(error)")
        }
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        // Standard error on a second thread, so that neither pipe can fill while the other is read.
        let errorData = Mutex(Data())
        let errorRead = DispatchSemaphore(value: 0)
        Thread {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            errorRead.signal()
        }.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        errorRead.wait()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }
}

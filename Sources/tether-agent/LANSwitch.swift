import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherCLISupport
import TetherCore

/// The devices' LAN side, stopped by SIGUSR1 and started again by SIGUSR2 (on the ports it had),
/// so that an app's move to the cloud and back can be tried without touching the network.
enum LANSwitch {
    static func serve(_ servers: [LANDeviceServer], logger: Logger) async {
        var current = servers
        var serving: Task<Void, Never>? = start(current, retryingBinds: false, logger: logger)
        for await number in signalStream([SIGUSR1, SIGUSR2]) {
            if number == SIGUSR1, let running = serving {
                running.cancel()
                await running.value
                serving = nil
                printError("LAN side stopped (SIGUSR1); SIGUSR2 starts it again")
            } else if number == SIGUSR2, serving == nil {
                var restarted: [LANDeviceServer] = []
                for server in current {
                    var configuration = server.configuration
                    if let addresses = try? await server.addresses() {
                        configuration.udpPort = addresses.udpPort
                        configuration.tcpPort = addresses.tcpPort
                    }
                    restarted.append(LANDeviceServer(device: server.device, configuration: configuration, logger: logger))
                }
                current = restarted
                serving = start(current, retryingBinds: true, logger: logger)
                printError("LAN side started again (SIGUSR2)")
            }
        }
        serving?.cancel()
        await serving?.value
    }

    /// Runs the servers. Restarted ones may find a port briefly taken (an app reconnecting to a
    /// port nobody listens on can be given that very port as its own on loopback), so their
    /// binding is tried again for a few seconds.
    private static func start(_ servers: [LANDeviceServer], retryingBinds: Bool, logger: Logger) -> Task<Void, Never> {
        Task {
            await withTaskGroup(of: Void.self) { group in
                for first in servers {
                    group.addTask {
                        var server = first
                        let deadline = ContinuousClock.now + .seconds(retryingBinds ? 8 : 0)
                        while true {
                            do {
                                try await server.run()
                                return
                            } catch let error as TetherError where error.code == .bindFailed && ContinuousClock.now < deadline && !Task.isCancelled {
                                try? await Task.sleep(for: .milliseconds(100))
                                server = LANDeviceServer(device: server.device, configuration: server.configuration, logger: logger)
                            } catch {
                                printError("device \(server.device.identity.did): \(error)")
                                return
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The LAN identity a device's cloud credentials give it (any part may be missing).
struct LANIdentity {
    var did: String?
    var passcode: String?
    var mac: [UInt8]?

    init(did: String?, passcode: String?, mac: String?) throws {
        if let did, did.count != 22 { throw ValidationError("a credential's did has 22 characters") }
        if let passcode, passcode.isEmpty || passcode.count > 32 { throw ValidationError("a credential's passcode has 1 to 32 characters") }
        self.did = did
        self.passcode = passcode
        if let mac {
            let digits = Array(mac.lowercased().filter { $0 != ":" && $0 != "-" })
            guard digits.count == 12, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else {
                throw ValidationError("a credential's mac has 12 hex digits")
            }
            self.mac = stride(from: 0, to: 12, by: 2).map { UInt8(String(digits[$0..<$0 + 2]), radix: 16)! }
        }
    }

    func apply(to identity: inout DeviceIdentity) {
        if let did { identity.did = did }
        if let passcode { identity.passcode = passcode }
        if let mac { identity.mac = mac }
    }
}

import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherCLISupport
import TetherCore
import TetherTuyaLAN

/// A device's LAN side that can be stopped and started again on the ports it had: the GAgent
/// server or the Tuya one.
protocol RestartableLANServer: Sendable {
    var deviceName: String { get }
    func run() async throws
    /// The same server again, on the ports it was bound to.
    func restarted(logger: Logger) async -> Self
}

extension LANDeviceServer: RestartableLANServer {
    var deviceName: String { device.identity.did }

    func restarted(logger: Logger) async -> LANDeviceServer {
        var configuration = self.configuration
        if let addresses = try? await addresses() {
            configuration.udpPort = addresses.udpPort
            configuration.tcpPort = addresses.tcpPort
        }
        // A client reconnecting meanwhile can hold a port for a moment.
        configuration.bindRetry = .seconds(8)
        return LANDeviceServer(device: device, configuration: configuration, logger: logger)
    }
}

extension TuyaDeviceServer: RestartableLANServer {
    var deviceName: String { configuration.deviceID }

    func restarted(logger: Logger) async -> TuyaDeviceServer {
        var configuration = self.configuration
        if let port = try? await port() { configuration.port = port }
        return TuyaDeviceServer(device: device, configuration: configuration, logger: logger)
    }
}

/// The devices' LAN side, stopped by SIGUSR1 and started again by SIGUSR2 (on the ports it had),
/// so that an app's move to the cloud and back, or its reconnection, can be tried without
/// touching the network.
enum LANSwitch {
    static func serve<Server: RestartableLANServer>(_ servers: [Server], logger: Logger) async {
        // The servers run as a child of this call, in a scope of their own, so that they can be
        // stopped and started again while the call goes on.
        let scope = TaskScope()
        await withDiscardingTaskGroup { group in
            group.addTask { await scope.run() }
            var current = servers
            var serving: TaskScope.Handle? = start(current, in: scope)
            for await number in signalStream([SIGUSR1, SIGUSR2]) {
                if number == SIGUSR1, let running = serving {
                    running.cancel()
                    await running.wait()
                    serving = nil
                    printError("LAN side stopped (SIGUSR1); SIGUSR2 starts it again")
                } else if number == SIGUSR2, serving == nil {
                    var restarted: [Server] = []
                    for server in current { restarted.append(await server.restarted(logger: logger)) }
                    current = restarted
                    serving = start(current, in: scope)
                    printError("LAN side started again (SIGUSR2)")
                }
            }
            group.cancelAll()
        }
    }

    private static func start<Server: RestartableLANServer>(_ servers: [Server], in scope: TaskScope) -> TaskScope.Handle {
        scope.start {
            await withTaskGroup(of: Void.self) { group in
                for server in servers {
                    group.addTask {
                        do {
                            try await server.run()
                        } catch {
                            printError("device \(server.deviceName): \(error)")
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
            guard let bytes = MACAddress.bytes(mac) else { throw ValidationError("a credential's mac has 12 hex digits") }
            self.mac = bytes
        }
    }

    func apply(to identity: inout DeviceIdentity) {
        if let did { identity.did = did }
        if let passcode { identity.passcode = passcode }
        if let mac { identity.mac = mac }
    }
}

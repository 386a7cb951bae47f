import ArgumentParser
import Foundation
import Logging
import TetherAgent
import TetherBlueZ
import TetherBluetooth
import TetherCLISupport
import TetherCore
import TetherDBus

/// `tether-agent ble-simulate`: a simulated Bluetooth LE device through BlueZ's peripheral API.
struct BLESimulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ble-simulate",
        abstract: "Run a simulated Bluetooth LE device (LW003-V3 or DIoT) through BlueZ on one adapter.",
        discussion: """
            Registers a GATT application and an advertisement with bluetoothd (or bluezoo) on the bus \
            DBUS_SYSTEM_BUS_ADDRESS names, and serves centrals until SIGINT or SIGTERM. The LW003-V3 \
            holds beacon records of every type, writes a log while a central listens, drains its \
            battery and asks for --password when one is given. Faults: --refuse-passwords, \
            --drop-link-after S, --garbage-frames. The DIoT sensor answers its feature, channel and \
            rate tables, sends live data at each channel's rate, and has a debug console.
            """)

    @Option(help: "The profile: lw003 or diot.") var profile: String
    @Option(help: "The adapter to advertise on (hci1, …).") var adapter = "hci0"
    @Option(help: "LW003: the 8-character password the device asks for (none: no login).") var password: String?
    @Option(help: "LW003: the MAC it advertises.") var mac = "C8:47:8C:12:34:56"
    @Option(help: "LW003: how many beacon records it holds.") var records = 120
    @Option(help: "Seconds between log lines.") var logInterval: Double = 1
    @Flag(help: "Fault: refuse every password.") var refusePasswords = false
    @Option(help: "Fault: drop the link this many seconds after a central connects.") var dropLinkAfter: Double?
    @Flag(help: "Fault: put malformed frames into the storage stream.") var garbageFrames = false
    @Flag(help: "Log what the device does.") var verbose = false

    func validate() throws {
        guard ["lw003", "diot"].contains(profile) else { throw ValidationError("--profile is lw003 or diot") }
        if let password { _ = try LW003Login(password: password) }
        guard (0...10_000).contains(records) else { throw ValidationError("--records is 0 to 10000") }
        if let problem = problemWithSeconds(logInterval, option: "--log-interval", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
        if let dropLinkAfter, let problem = problemWithSeconds(dropLinkAfter, option: "--drop-link-after", maximum: 3600, allowZero: false) {
            throw ValidationError(problem)
        }
    }

    func run() async throws {
        var logger = Logger(label: "tether.agent.ble")
        logger.logLevel = verbose ? .info : .warning
        let address = try DBusAddress.system(environment: ProcessInfo.processInfo.environment)
        if profile == "diot" {
            let simulator = DIoTSimulator(logger: logger)
            return try await advertise(simulator.definition, handler: simulator, bus: address, logger: logger) { await simulator.serve($0) }
        }
        var configuration = LW003Simulator.Configuration()
        configuration.password = password
        configuration.mac = mac
        configuration.records = records
        configuration.logInterval = .milliseconds(Int64(logInterval * 1000))
        configuration.faults = LW003Faults(
            refusePasswords: refusePasswords, dropLinkAfter: dropLinkAfter.map { .milliseconds(Int64($0 * 1000)) }, garbageFrames: garbageFrames)
        let simulator = try LW003Simulator(configuration: configuration, logger: logger)
        try await advertise(try simulator.definition, handler: simulator, bus: address, logger: logger) { await simulator.serve($0) }
    }

    /// Registers `definition` on the adapter, says so on standard output (scripts wait for the
    /// line), and serves until SIGINT or SIGTERM.
    private func advertise(
        _ definition: BluetoothPeripheralDefinition, handler: any BluetoothPeripheralHandler, bus address: DBusAddress, logger: Logger,
        serve: @escaping @Sendable (BlueZPeripheral) async -> Void
    ) async throws {
        let adapter = adapter
        try await runUntilTerminated {
            try await BlueZPeripheral.withPeripheral(adapter: adapter, bus: address, definition: definition, handler: handler, logger: logger) {
                peripheral in
                printLine("advertising \(definition.advertisement.localName ?? "") on \(adapter)")
                await serve(peripheral)
            }
        }
    }
}

import ArgumentParser
import Foundation
import TetherBlueZ
import TetherBluetooth
import TetherCLISupport
import TetherCore
import TetherDBus

/// `tether ble …`: Bluetooth LE devices through BlueZ (Linux), on the bus `DBUS_SYSTEM_BUS_ADDRESS` names.
struct BLECommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ble", abstract: "Bluetooth LE devices through BlueZ: scan, connect, read, write, watch; LW003-V3 and DIoT profiles.",
        subcommands: [BLEScan.self, BLEKnown.self, BLEConnect.self, BLERead.self, BLEWrite.self, BLEWatch.self, BLELW003Command.self, BLEDIoTCommand.self])

    /// Opens the central of `adapter` on the system bus (or `DBUS_SYSTEM_BUS_ADDRESS`).
    static func withCentral(adapter: String, _ body: @escaping @Sendable (BlueZCentral) async throws -> Void) async throws {
        let address = try DBusAddress.system(environment: ProcessInfo.processInfo.environment)
        try await runUntilTerminated {
            try await BlueZCentral.withCentral(adapter: adapter, bus: address) { central in try await body(central) }
        }
    }
}

struct BLEAdapterOptions: ParsableArguments {
    @Option(help: "The adapter (hci0, …).") var adapter = "hci0"
}

struct BLEDeviceOptions: ParsableArguments {
    @Option(help: "The adapter (hci0, …).") var adapter = "hci0"
    @Option(help: "The device's address (C8:47:8C:12:34:56).") var address: String
    @Option(help: "Seconds to find and connect to the device.") var timeout: Double = 20

    func validate() throws {
        guard MACAddress.hexDigits(address) != nil, address.utf8.count == 17 else {
            throw ValidationError("--address is a Bluetooth address such as C8:47:8C:12:34:56")
        }
        if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 600, allowZero: false) { throw ValidationError(problem) }
    }

    var connection: BluetoothConnectionOptions { BluetoothConnectionOptions(timeout: .milliseconds(Int64(timeout * 1000))) }

    /// Connects, runs `body`, disconnects.
    func withConnection(_ body: @escaping @Sendable (any BluetoothConnection) async throws -> Void) async throws {
        let options = connection
        let address = address
        try await BLECommand.withCentral(adapter: adapter) { central in
            try await central.withConnection(to: address, options: options) { link in try await body(link) }
        }
    }
}

struct BLECharacteristicOptions: ParsableArguments {
    @Option(help: "The service's UUID (180A, or the 128-bit form).") var service: String
    @Option(help: "The characteristic's UUID.") var characteristic: String

    func id() throws -> BluetoothCharacteristicID {
        BluetoothCharacteristicID(service: try BluetoothUUID(service), characteristic: try BluetoothUUID(characteristic))
    }
}

struct BLEScan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan", abstract: "List the devices advertising nearby, with what LW003-V3 and DIoT devices say in their advertisements.")
    @OptionGroup var adapter: BLEAdapterOptions
    @Option(help: "Seconds to scan.") var duration: Double = 5
    @Option(help: "Only devices advertising this service UUID (repeatable).") var service: [String] = []
    @Flag(help: "Report every advertisement, not each device once per change.") var duplicates = false
    @Flag(help: "Print one JSON object per device.") var json = false

    func validate() throws {
        if let problem = problemWithSeconds(duration, option: "--duration", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
        for uuid in service { _ = try BluetoothUUID(uuid) }
    }

    func run() async throws {
        let options = BluetoothScanOptions(services: try service.map { try BluetoothUUID($0) }, allowDuplicates: duplicates)
        let duration = Duration.milliseconds(Int64(duration * 1000))
        let json = json
        try await BLECommand.withCentral(adapter: adapter.adapter) { central in
            let results = try await central.scan(options)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await peripheral in results {
                        if json { printJSON(.object(BLEJSON.peripheral(peripheral))) } else { printLine(BLEJSON.describe(peripheral)) }
                    }
                }
                group.addTask { try await Task.sleep(for: duration) }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

struct BLEConnect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect", abstract: "Connect, list the device's services and characteristics, and disconnect.")
    @OptionGroup var device: BLEDeviceOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let json = json
        try await device.withConnection { link in
            let services = try await link.services()
            let length = await link.maximumValueLength()
            // The stack may have no RSSI for a link (BlueZ keeps only the last advertisement's).
            let rssi = try? await link.rssi()
            if json {
                var object: JSONObject = [
                    "address": .string(link.identifier), "maximumValueLength": .int(Int64(length)),
                    "services": .array(services.map(BLEJSON.service)),
                ]
                if let rssi { object["rssi"] = .int(Int64(rssi)) }
                printJSON(.object(object))
            } else {
                printLine("connected to \(link.identifier) (\(length) bytes per value\(rssi.map { ", \($0) dBm" } ?? ""))")
                for service in services {
                    printLine("service \(service.uuid)")
                    for characteristic in service.characteristics {
                        printLine("  \(characteristic.id.characteristic) [\(characteristic.properties.bluezFlags.joined(separator: ", "))]")
                    }
                }
            }
        }
    }
}

struct BLERead: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Read a characteristic's value.")
    @OptionGroup var device: BLEDeviceOptions
    @OptionGroup var target: BLECharacteristicOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let id = try target.id()
        let json = json
        try await device.withConnection { link in
            let value = try await link.read(id)
            if json { printJSON(.object(BLEJSON.value(value))) } else { printLine(value.tetherHex) }
        }
    }
}

struct BLEWrite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write", abstract: "Write a characteristic's value (hex).")
    @OptionGroup var device: BLEDeviceOptions
    @OptionGroup var target: BLECharacteristicOptions
    @Option(help: "The value, in hex (ED010108…).") var value: String
    @Flag(help: "Write without response (ATT Write Command).") var withoutResponse = false

    func validate() throws {
        guard [UInt8](tetherHex: value) != nil else { throw ValidationError("--value is hex digits") }
    }

    func run() async throws {
        let id = try target.id()
        let bytes = [UInt8](tetherHex: value) ?? []
        let type: BluetoothWriteType = withoutResponse ? .withoutResponse : .withResponse
        try await device.withConnection { link in
            try await link.write(bytes, to: id, type: type)
        }
    }
}

struct BLEWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch", abstract: "Print a characteristic's notifications as they come.")
    @OptionGroup var device: BLEDeviceOptions
    @OptionGroup var target: BLECharacteristicOptions
    @Option(help: "Stop after this many notifications.") var count: Int?
    @Option(help: "Stop after this many seconds.") var duration: Double?
    @Flag(help: "Print one JSON object per notification.") var json = false

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count is at least 1") }
        if let duration, let problem = problemWithSeconds(duration, option: "--duration", maximum: 86_400, allowZero: false) {
            throw ValidationError(problem)
        }
    }

    func run() async throws {
        let id = try target.id()
        let (json, count, duration) = (json, count, duration)
        try await device.withConnection { link in
            let values = try await link.notifications(of: id)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var seen = 0
                    for await value in values {
                        if json { printJSON(.object(BLEJSON.value(value))) } else { printLine(value.tetherHex) }
                        seen += 1
                        if let count, seen >= count { return }
                    }
                    printError("the link ended: \(try await link.disconnection())")
                }
                if let duration { group.addTask { try await Task.sleep(for: .milliseconds(Int64(duration * 1000))) } }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

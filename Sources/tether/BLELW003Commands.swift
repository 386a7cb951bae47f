import ArgumentParser
import Foundation
import TetherBluetooth
import TetherCLISupport
import TetherCore

/// `tether ble lw003 …`: a MOKO LW003-V3 beacon scanner (ble-profiles.md Part A).
struct BLELW003Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lw003", abstract: "A MOKO LW003-V3: device information, stored beacon records, the device log.",
        subcommands: [Info.self, Records.self, Log.self])

    struct Options: ParsableArguments {
        @OptionGroup var device: BLEDeviceOptions
        @Option(help: "The device's 8-character password, when its advertisement asks for one (or TETHER_LW003_PASSWORD).") var password: String?

        func validate() throws {
            if let password = resolvedPassword { _ = try LW003Login(password: password) }
        }

        var resolvedPassword: String? { password ?? ProcessInfo.processInfo.environment["TETHER_LW003_PASSWORD"] }

        /// Connects, logs in, runs `body`, disconnects.
        func withDevice(_ body: @escaping @Sendable (LW003Device) async throws -> Void) async throws {
            let password = resolvedPassword
            try await device.withConnection { link in
                try await LW003Device.withDevice(on: link, password: password) { lw003 in try await body(lw003) }
            }
        }
    }

    static func json(_ record: LW003BeaconRecord) -> JSONValue {
        .object([
            "type": .string(record.name), "typeCode": .int(Int64(record.typeByte)), "scanTime": .int(Int64(record.scanTime)),
            "localTime": .string(record.localScanTime), "timeZoneHalfHours": .int(Int64(record.timeZoneHalfHours)), "mac": .string(record.mac),
            "rssi": .int(Int64(record.rssi)), "raw": .string(record.raw.tetherHex),
        ])
    }

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Model, firmware and the rest of Device Information, and the battery voltage.")
        @OptionGroup var options: Options
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let json = json
            try await options.withDevice { device in
                let information = try await device.deviceInformation()
                let millivolts = try await device.read(.batteryVoltage).batteryMillivolts()
                var object: JSONObject = [
                    "model": .string(information.model), "firmware": .string(information.firmware), "hardware": .string(information.hardware),
                    "software": .string(information.software), "manufacturer": .string(information.manufacturer),
                    "batteryMillivolts": .int(Int64(millivolts)),
                ]
                if let serial = information.serialNumber { object["serialNumber"] = .string(serial) }
                if json {
                    printJSON(.object(object))
                } else {
                    printLine("\(information.manufacturer) \(information.model), firmware \(information.firmware), battery \(millivolts) mV")
                }
            }
        }
    }

    struct Records: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload the stored beacon records (oldest first) and print each one with its type and fields.")
        @OptionGroup var options: Options
        @Option(help: "Records of the last N days (65535: all).") var days = 65535
        @Option(help: "Stop after this many records.") var count: Int?
        @Flag(help: "Print one JSON object per record.") var json = false

        func validate() throws {
            guard (1...65535).contains(days) else { throw ValidationError("--days is 1 to 65535") }
            if let count, count < 1 { throw ValidationError("--count is at least 1") }
        }

        func run() async throws {
            let (days, count, json) = (UInt16(days), count, json)
            try await options.withDevice { device in
                var seen = 0
                for try await record in try await device.records(days: days) {
                    if json {
                        printJSON(BLELW003Command.json(record))
                    } else {
                        printLine("\(record.localScanTime) \(record.name) \(record.mac) \(record.rssi) dBm \(record.raw.tetherHex)")
                    }
                    seen += 1
                    if let count, seen >= count { break }
                }
                // Stop an upload left running, so that the device does not stream to nobody.
                if let count, seen >= count { try? await device.write(.pauseStorageUpload, value: [0x00]) }
            }
        }
    }

    struct Log: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the device's log lines as they come.")
        @OptionGroup var options: Options
        @Option(help: "Stop after this many lines.") var count: Int?
        @Option(help: "Stop after this many seconds.") var duration: Double?
        @Flag(help: "Print one JSON object per line.") var json = false

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count is at least 1") }
            if let duration, let problem = problemWithSeconds(duration, option: "--duration", maximum: 86_400, allowZero: false) {
                throw ValidationError(problem)
            }
        }

        func run() async throws {
            let (count, duration, json) = (count, duration, json)
            try await options.withDevice { device in
                let lines = try await device.log()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var seen = 0
                        for await line in lines {
                            if json { printJSON(.object(["line": .string(line)])) } else { printLine(line) }
                            seen += 1
                            if let count, seen >= count { return }
                        }
                    }
                    if let duration { group.addTask { try await Task.sleep(for: .milliseconds(Int64(duration * 1000))) } }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }
}

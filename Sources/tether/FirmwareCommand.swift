import ArgumentParser
import Foundation
import Tether
import TetherCLISupport

struct FirmwareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "firmware",
        abstract: "Print what a device runs and may be upgraded to (Alink devices), or upgrade it.",
        discussion: """
            Without --upgrade, prints the versions the device reports, its product's packages and its upgrades. \
            --upgrade ID offers package ID to the device (now, or when it connects within --ttl seconds); \
            with --wait, prints its progress until it ends and exits non-zero unless the device runs the new version.
            """
    )

    @OptionGroup var device: SubscribedDeviceOptions

    @Option(name: .long, help: "Offer this firmware package (its id, from the listing) to the device.")
    var upgrade: Int64?

    @Option(name: .long, help: "With --upgrade: seconds the offer waits for the device (60 to 604800; default 86400).")
    var ttl: Int?

    @Flag(name: .long, help: "With --upgrade: follow the upgrade until it ends.")
    var wait = false

    @Option(name: .customLong("wait-timeout"), help: "With --wait: give up after this many seconds.")
    var waitTimeout: Double = 600

    func validate() throws {
        guard upgrade != nil || (ttl == nil && !wait) else { throw ValidationError("--ttl and --wait go with --upgrade") }
        if let ttl, !(60...604_800).contains(ttl) { throw ValidationError("--ttl is 60 to 604800 seconds") }
        if let problem = problemWithSeconds(waitTimeout, option: "--wait-timeout", maximum: 86_400, allowZero: false) { throw ValidationError(problem) }
    }

    func run() async throws {
        let json = device.json
        guard let upgrade else {
            let firmware = try await device.withDevice { try await $0.firmware() }
            if json {
                printJSON(Self.json(firmware))
                return
            }
            printLine(
                "runs: "
                    + (firmware.versions.isEmpty
                        ? "(not reported)" : firmware.versions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
            printLine("packages:" + (firmware.packages.isEmpty ? " (none)" : ""))
            for package in firmware.packages {
                printLine("  \(package.id)  \(package.module) \(package.version)  \(package.size) bytes  sha256 \(package.sha256)")
            }
            printLine("upgrades:" + (firmware.upgrades.isEmpty ? " (none)" : ""))
            for upgrade in firmware.upgrades { printLine("  " + Self.describe(upgrade)) }
            return
        }
        let (ttl, wait, timeout) = (self.ttl.map { Duration.seconds($0) }, self.wait, self.waitTimeout)
        let final = try await device.withDevice { device -> FirmwareUpgrade? in
            let events = device.events()
            let command = try await device.upgradeFirmware(to: upgrade, ttl: ttl)
            guard wait else {
                if json {
                    printJSON(["command_id": .int(command.id), "state": .string(command.state)])
                } else {
                    printLine("upgrade \(command.id) \(command.state)")
                }
                return nil
            }
            return try await withThrowingTaskGroup(of: FirmwareUpgrade?.self) { group in
                group.addTask {
                    for await event in events {
                        guard case .firmwareUpgrade(let progress) = event, progress.commandID == command.id else { continue }
                        if json { printJSON(Self.json(progress)) } else { printLine(Self.describe(progress)) }
                        if progress.state.isFinal { return progress }
                    }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                    // The last word is the ledger's, in case a push was missed.
                    return try await device.firmware().upgrades.first { $0.commandID == command.id }
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        }
        guard wait else { return }
        guard let final, final.state == .applied else {
            throw TetherError(.timeout, final.map { "the upgrade ended \($0.state.rawValue): \($0.detail)" } ?? "the upgrade did not end within \(timeout) s")
        }
    }

    static func describe(_ upgrade: FirmwareUpgrade) -> String {
        var line = "upgrade \(upgrade.commandID): \(upgrade.module) → \(upgrade.version) \(upgrade.state.rawValue)"
        if let progress = upgrade.progress { line += " \(progress)%" }
        if let step = upgrade.failureStep { line += " (step \(step))" }
        if !upgrade.detail.isEmpty { line += " — \(upgrade.detail)" }
        return line
    }

    static func json(_ upgrade: FirmwareUpgrade) -> JSONValue {
        [
            "command_id": .int(upgrade.commandID), "did": .string(upgrade.did), "state": .string(upgrade.state.rawValue),
            "firmware_id": .int(upgrade.firmwareID), "version": .string(upgrade.version), "module": .string(upgrade.module),
            "progress": upgrade.progress.map { .int(Int64($0)) } ?? .null, "failure_step": upgrade.failureStep.map { .int(Int64($0)) } ?? .null,
            "detail": .string(upgrade.detail), "updated_at": .int(upgrade.updatedAt),
        ]
    }

    static func json(_ firmware: DeviceFirmware) -> JSONValue {
        var versions = JSONObject()
        for module in firmware.versions.keys.sorted() { versions[module] = .string(firmware.versions[module]!) }
        return [
            "versions": .object(versions),
            "packages": .array(
                firmware.packages.map {
                    ["id": .int($0.id), "module": .string($0.module), "version": .string($0.version), "size": .int($0.size), "sha256": .string($0.sha256)]
                }),
            "upgrades": .array(firmware.upgrades.map(json)),
        ]
    }
}

import ArgumentParser
import Tether
import TetherCLISupport
import TetherCloudProtocol

struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Groups of your devices; a single-product group is written to as one.",
        subcommands: [List.self, Create.self, Rename.self, Delete.self, Devices.self, Add.self, Remove.self, Write.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your groups.")
        @OptionGroup var options: CloudClientOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let groups = try await options.withClient(lanDiscovery: false) { try await $0.groups.list() }
            if json { return printJSON(.array(groups.map(\.json))) }
            if groups.isEmpty { printLine("no groups") }
            for group in groups {
                printLine("\(group.id)  \(group.name)  \(group.isSingleProduct ? "product \(group.productKey) (\(group.productName))" : "mixed")")
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a group; with --product-key, of that product's devices only.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The group's name.") var name: String
        @Option(name: .customLong("product-key"), help: "The one product of its devices.") var productKey: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (name, productKey) = (self.name, self.productKey)
            let group = try await options.withClient(lanDiscovery: false) { try await $0.groups.create(name: name, productKey: productKey) }
            if json { printJSON(group.json) } else { printLine("group \(group.id) created") }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a group.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The group's id.") var id: String
        @Argument(help: "The new name.") var name: String

        func run() async throws {
            let (id, name) = (self.id, self.name)
            try await options.withClient(lanDiscovery: false) { try await $0.groups.rename(id, to: name) }
            printLine("group \(id) renamed")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a group; its devices stay bound to you.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The group's id.") var id: String

        func run() async throws {
            let id = self.id
            try await options.withClient(lanDiscovery: false) { try await $0.groups.delete(id) }
            printLine("group \(id) deleted")
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A group's devices.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The group's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = self.id
            let devices = try await options.withClient(lanDiscovery: false) { try await $0.groups.devices(of: id) }
            if json { return printJSON(.array(devices.map(\.json))) }
            if devices.isEmpty { printLine("no devices") }
            for device in devices { printLine("\(device.did)  \(device.productName)\(device.alias.isEmpty ? "" : "  \"\(device.alias)\"")") }
        }
    }

    /// The arguments of `add` and `remove`: a group and devices.
    struct Membership: ParsableArguments {
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The group's id.") var id: String
        @Argument(help: "The devices' dids.") var dids: [String]
        @Flag(help: "Print JSON.") var json = false

        /// Runs the change; prints what it did, and fails when any device failed.
        func change(_ body: @escaping @Sendable (DeviceGroups, String, [String]) async throws -> DeviceGroupChange) async throws {
            let (id, dids) = (self.id, self.dids)
            let change = try await options.withClient(lanDiscovery: false) { try await body($0.groups, id, dids) }
            if json {
                printJSON(change.json(detail: true))
            } else {
                for did in change.success { printLine("\(did)  done") }
                for failure in change.failed { printLine("\(failure.did)  failed: \(failure.errorCode) \(failure.message)") }
            }
            if !change.failed.isEmpty { throw ExitCode(1) }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add devices you are bound to.")
        @OptionGroup var membership: Membership

        func run() async throws { try await membership.change { groups, id, dids in try await groups.add(dids, to: id) } }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take devices out of a group.")
        @OptionGroup var membership: Membership

        func run() async throws { try await membership.change { groups, id, dids in try await groups.remove(dids, from: id) } }
    }

    struct Write: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write data points to every device of a single-product group.")
        @OptionGroup var options: CloudClientOptions
        @Argument(help: "The group's id.") var id: String
        @Argument(help: "NAME=VALUE (numbers and true/false as JSON; enums by label).") var assignments: [String]
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (id, values) = (self.id, try JSONAssignments.attrs(assignments))
            let results = try await options.withClient(lanDiscovery: false) { try await $0.groups.write(values, to: id) }
            if json { return printJSON(.array(results.map(\.json))) }
            for result in results {
                printLine(
                    "\(result.did)  " + (result.result ? "accepted, command \(result.commandID.map(String.init) ?? "?")" : "failed: \(result.errorCode ?? 0)"))
            }
        }
    }
}

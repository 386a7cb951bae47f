import ArgumentParser
import Tether
import TetherCLISupport

struct ShadowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shadow",
        abstract: "Print a device's shadow (Alink devices), or write what it should be.",
        discussion: """
            Without --desired or --clear-desired, prints the shadow. A write needs --version greater than the shadow's \
            (print it first); the cloud refuses a stale one with 9501. In --desired, null removes a key.
            """
    )

    @OptionGroup var options: CloudClientOptions

    @Argument(help: "The device's did.")
    var did: String

    @Option(name: .long, help: "What the device should be, as a JSON object ({\"brightness\": 80}).")
    var desired: String?

    @Flag(name: .customLong("clear-desired"), help: "Empty what apps desire of the device.")
    var clearDesired = false

    @Option(name: .long, help: "The version of the write: greater than the shadow's.")
    var version: Int64?

    @Flag(name: .long, help: "Print the shadow as JSON ({\"state\", \"metadata\", \"version\", \"timestamp\"}).")
    var json = false

    func validate() throws {
        guard desired == nil || !clearDesired else { throw ValidationError("give --desired or --clear-desired, not both") }
        let writes = desired != nil || clearDesired
        guard writes == (version != nil) else { throw ValidationError("--version goes with --desired or --clear-desired, and they need it") }
        if let desired, (try? JSONValue.parse(desired))?.objectValue == nil { throw ValidationError("--desired takes a JSON object") }
    }

    func run() async throws {
        let change: ShadowUpdate.Change? =
            if clearDesired { .cleared } else { desired.flatMap { try? JSONValue.parse($0).objectValue }.map(ShadowUpdate.Change.merged) }
        let (did, version) = (self.did, self.version)
        let shadow = try await options.withClient(lanDiscovery: false) { client -> DeviceShadow in
            let device = try await client.refreshBindings().first { $0.did == did }
            guard let device else { throw TetherError(.invalidArgument, "\(did) is not bound to you") }
            switch (change, version) {
            case (.merged(let values)?, let version?): return try await device.updateShadow(desired: values, version: version)
            case (.cleared?, let version?): return try await device.clearDesiredShadow(version: version)
            default: return try await device.shadow()
            }
        }
        if json {
            printJSON(shadow.json)
            return
        }
        printLine("version \(shadow.version)")
        for (name, section) in [("reported", shadow.reported), ("desired", shadow.desired)] {
            printLine("\(name):" + (section.isEmpty ? " (none)" : ""))
            for key in section.keys { printLine("  \(key) = \(section[key]!.serialized())") }
        }
    }
}

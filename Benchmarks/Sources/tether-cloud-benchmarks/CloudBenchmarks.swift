import ArgumentParser
import Foundation

/// The cloud's gateway under load, against a `tether-cloud serve` process
/// (`scripts/bench-gateway.sh` runs the whole thing): `setup` writes an app, a product and the
/// devices into the server's database before it starts; `run` then measures the write round
/// trip through the cloud, stored property posts per second, and memory per connected device.
@main
struct CloudBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-cloud-benchmarks",
        abstract: "Load the cloud's device gateway and app API.",
        subcommands: [Setup.self, Run.self, Storm.self, ScheduleBurst.self, RuleLoad.self, Soak.self]
    )
}

import ArgumentParser
import TetherCore

@main
struct TetherCloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-cloud",
        abstract: "The self-hostable Tether cloud: accounts, products, devices and bindings behind a Gizwits-compatible Open API.",
        version: TetherVersion.current,
        subcommands: [ServeCommand.self, AdminCommand.self, DevCommand.self]
    )
}

/// `--database`, shared by every command.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "sqlite:PATH[?synchronous=normal] (the default: sqlite:tether-data/tether.sqlite) or postgres://USER:PASSWORD@HOST:PORT/DB.")
    var database: String = "sqlite:tether-data/tether.sqlite"
}

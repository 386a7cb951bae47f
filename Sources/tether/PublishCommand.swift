import ArgumentParser
import Tether
import TetherCLISupport

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Send bytes to one of a device's custom topics (/PK/DN/user/…) through the cloud (Alink devices)."
    )

    @OptionGroup var options: CloudClientOptions

    @Argument(help: "The device's did.")
    var did: String

    @Option(name: .long, help: "The topic: /PK/DN/user/… of a class the product's devices subscribe to.")
    var topic: String

    @OptionGroup(title: "The message") var message: PayloadOptions

    @Option(name: .long, help: "0 or 1.")
    var qos = 0

    func validate() throws {
        guard qos == 0 || qos == 1 else { throw ValidationError("--qos is 0 or 1") }
    }

    func run() async throws {
        let bytes = message.bytes
        let (did, topic, qos) = (self.did, self.topic, self.qos)
        try await options.withClient(lanDiscovery: false) { client in
            let device = try await client.refreshBindings().first { $0.did == did }
            guard let device else { throw TetherError(.invalidArgument, "\(did) is not bound to you") }
            try await device.publish(topic: topic, payload: bytes, qos: qos)
        }
        printLine("published to \(topic)")
    }
}

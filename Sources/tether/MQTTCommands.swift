import ArgumentParser
import Logging
import NIOCore
import TetherCLISupport
import TetherMQTT

struct MQTT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "MQTT 3.1.1 and 5: a development broker, publish and subscribe clients, a load generator.",
        subcommands: [MQTTBrokerCommand.self, MQTTPub.self, MQTTSub.self, MQTTBench.self]
    )
}

struct MQTTBrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run Tether's MQTT broker (anyone may connect, publish and subscribe)."
    )

    @Option(name: .long, help: "Address to listen on.")
    var bind = "0.0.0.0"

    @Option(name: .long, help: "TCP port.")
    var port = 1883

    @Option(name: .customLong("websocket-port"), help: "Also serve MQTT over WebSocket on this port (path /mqtt).")
    var webSocketPort: Int?

    @Option(name: .customLong("max-packet-size"), help: "Largest packet accepted, bytes.")
    var maximumPacketSize = 1 << 20

    @Flag(name: .long, help: "Log connections and protocol errors to standard error.")
    var verbose = false

    func run() async throws {
        var logger = Logger(label: "tether.mqtt")
        logger.logLevel = verbose ? .debug : .notice
        let broker = MQTTBroker(configuration: MQTTBrokerConfiguration(maximumPacketSize: maximumPacketSize), logger: logger)
        let verbose = self.verbose
        try await runUntilTerminated {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var listeners: [MQTTListener] = [.tcp(host: bind, port: port)]
                if let webSocketPort { listeners.append(.webSocket(host: bind, port: webSocketPort)) }
                let all = listeners
                group.addTask { try await broker.run(listeners: all) }
                for address in try await broker.addresses() {
                    printLine("listening on \(address.ipAddress ?? bind):\(address.port ?? port)")
                }
                if verbose {
                    group.addTask {
                        for await event in broker.events() { printError("\(event)") }
                    }
                }
                try await group.next()
            }
        }
    }
}

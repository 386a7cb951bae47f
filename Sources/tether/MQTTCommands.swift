import ArgumentParser
import Logging
import NIOCore
import NIOPosix
import TetherCLISupport
import TetherMQTT
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct MQTT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "MQTT 3.1.1 and 5: a development broker, publish and subscribe clients, a load generator.",
        subcommands: [MQTTBrokerCommand.self, MQTTPasswd.self, MQTTPub.self, MQTTSub.self, MQTTBench.self]
    )
}

struct MQTTBrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run Tether's MQTT broker.",
        discussion: """
            Without --config it listens on 127.0.0.1:1883 and lets anyone who reaches it connect,
            publish and subscribe (a development broker). With --config FILE (mosquitto's syntax:
            listeners with TCP, TLS and WebSocket, password_file, acl_file, persistence, limits) it
            does what the file says; SIGHUP reads the password and ACL files again.
            """
    )

    @Option(name: [.customShort("c"), .long], help: "A configuration file in mosquitto's syntax (see the README).")
    var config: String?

    @Option(name: .long, help: "Address to listen on, without --config (0.0.0.0: every interface, and anyone there can connect).")
    var bind: String?

    @Option(name: .long, help: "TCP port, without --config.")
    var port: Int?

    @Option(name: .customLong("websocket-port"), help: "Also serve MQTT over WebSocket on this port (path /mqtt), without --config.")
    var webSocketPort: Int?

    @Option(name: .customLong("max-packet-size"), help: "Largest packet accepted, bytes, without --config.")
    var maximumPacketSize: Int?

    @Flag(name: .long, help: "Log connections and protocol errors to standard error.")
    var verbose = false

    func validate() throws {
        if config != nil, bind != nil || port != nil || webSocketPort != nil || maximumPacketSize != nil {
            throw ValidationError("with --config, listeners and limits come from the file")
        }
    }

    func run() async throws {
        var logger = Logger(label: "tether.mqtt")
        logger.logLevel = verbose ? .debug : .notice
        var file = MQTTBrokerFileConfiguration()
        if let config {
            file = try MQTTBrokerFileConfiguration.load(path: config)
        } else {
            file.broker.outgoingTopicAliasMaximum = 0
            if let maximumPacketSize { file.broker.maximumPacketSize = maximumPacketSize }
            let host = bind ?? "127.0.0.1"
            var listener = MQTTBrokerFileConfiguration.Listener(port: port ?? 1883, address: host)
            listener.transport = .mqtt
            file.listeners = [listener]
            if let webSocketPort {
                var webSocket = MQTTBrokerFileConfiguration.Listener(port: webSocketPort, address: host)
                webSocket.transport = .webSockets
                file.listeners.append(webSocket)
            }
            file.allowAnonymous = true
            if !Self.isLoopback(host) {
                printError("warning: listening on \(host) without --config: anyone who reaches it can connect, publish and subscribe")
            }
        }
        try await Self.serve(file, configPath: config, logger: logger, verbose: verbose)
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    static func serve(_ file: MQTTBrokerFileConfiguration, configPath: String?, logger: Logger, verbose: Bool) async throws {
        let security = try MQTTFileSecurity(file)
        let persistence = file.persistencePath.map { MQTTFilePersistence(path: $0) }
        let group = file.threads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }
        let broker = MQTTBroker(
            configuration: file.broker, hooks: security, persistence: persistence ?? MQTTNoPersistence(),
            logger: logger, group: group
        )
        let listeners = try file.makeListeners()
        try await runUntilTerminated {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await broker.run(listeners: listeners) }
                for address in try await broker.addresses() {
                    printLine("listening on \(address.ipAddress ?? "?"):\(address.port ?? 0)")
                }
                if let persistence {
                    tasks.addTask {
                        await persistence.autosave(every: .seconds(file.autosaveInterval)) { error in
                            logger.error("the broker's state could not be saved", metadata: ["error": "\(error)"])
                        }
                    }
                }
                if let configPath {
                    tasks.addTask {
                        for await _ in signalStream([SIGHUP]) {
                            do {
                                let fresh = try MQTTBrokerFileConfiguration.load(path: configPath)
                                try security.reload(fresh)
                                if fresh.listeners != file.listeners || fresh.broker != file.broker || fresh.persistence != file.persistence {
                                    logger.notice("listeners, limits and persistence take effect at the next start")
                                }
                                logger.notice("reloaded the password and ACL files", metadata: ["config": "\(configPath)"])
                            } catch {
                                logger.error("the configuration was not reloaded; the previous one stays", metadata: ["error": "\(error)"])
                            }
                        }
                    }
                }
                if verbose {
                    tasks.addTask {
                        for await event in broker.events() { printError("\(event)") }
                    }
                }
                try await tasks.next()
                tasks.cancelAll()
            }
        }
        try? await group?.shutdownGracefully()
        // The broker saved its persistent sessions on the way out; write them.
        if let persistence {
            do {
                try persistence.save()
            } catch {
                logger.error("the broker's state could not be saved", metadata: ["error": "\(error)"])
            }
        }
    }
}

import ArgumentParser
import Foundation
import Logging
import NIOCore
import TetherCLISupport
import TetherMQTT

/// The connection flags mosquitto_pub and mosquitto_sub share, with their meanings.
struct MQTTConnectionOptions: ParsableArguments {
    @Option(name: .customShort("h"), help: "Broker host.")
    var host = "localhost"

    @Option(name: .customShort("p"), help: "Broker port.")
    var port = 1883

    @Option(name: .customShort("V"), help: "Protocol version: 311 (also mqttv311) or 5 (also mqttv5).")
    var protocolVersion = "311"

    @Option(name: .customShort("i"), help: "Client identifier (generated when omitted).")
    var clientID: String?

    @Option(name: .customShort("u"), help: "User name.")
    var username: String?

    @Option(name: .customShort("P"), help: "Password (TETHER_MQTT_PASSWORD in the environment keeps it out of the process list).")
    var password: String?

    @Option(name: .customShort("k"), help: "Keep-alive, seconds.")
    var keepAlive: UInt16 = 60

    @Flag(name: .customShort("c"), help: "Persistent session (no clean session / clean start): receive what arrived while away.")
    var persistent = false

    @Flag(name: .customShort("d"), help: "Log protocol details to standard error.")
    var debug = false

    var version: MQTTVersion {
        get throws {
            switch protocolVersion.lowercased() {
            case "311", "mqttv311", "3.1.1": return .v311
            case "31", "mqttv31", "3.1": return .v31
            case "5", "mqttv5", "5.0": return .v5
            default: throw ValidationError("-V takes 311 or 5")
            }
        }
    }

    func configuration() throws -> MQTTClientConfiguration {
        let password = self.password ?? ProcessInfo.processInfo.environment["TETHER_MQTT_PASSWORD"]
        var configuration = MQTTClientConfiguration(
            host: host, port: port, version: try version, cleanStart: !persistent, sessionExpiry: persistent ? 3600 : 0,
            keepAlive: keepAlive, username: username, password: password.map { Array($0.utf8) }, reconnect: nil
        )
        if let clientID { configuration.clientID = clientID }
        return configuration
    }

    var logger: Logger {
        var logger = Logger(label: "tether.mqtt")
        logger.logLevel = debug ? .debug : .warning
        return logger
    }
}

func parseQoS(_ value: Int) throws -> MQTTQoS {
    guard let qos = MQTTQoS(rawValue: UInt8(clamping: value)), value >= 0 else { throw ValidationError("-q takes 0, 1 or 2") }
    return qos
}

struct MQTTPub: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pub",
        abstract: "Publish one message, as mosquitto_pub does.",
        helpNames: [.long]
    )

    @OptionGroup var connection: MQTTConnectionOptions

    @Option(name: .customShort("t"), help: "Topic.")
    var topic: String

    @Option(name: .customShort("m"), help: "Message payload.")
    var message: String?

    @Flag(name: .customShort("n"), help: "Send an empty message.")
    var empty = false

    @Option(name: .customShort("q"), help: "QoS: 0, 1 or 2.")
    var qos = 0

    @Flag(name: .customShort("r"), help: "Retain the message.")
    var retain = false

    func validate() throws {
        guard (message != nil) != empty else { throw ValidationError("give -m MESSAGE or -n") }
        _ = try parseQoS(qos)
        try MQTTTopic.validateName(topic)
    }

    func run() async throws {
        let message = MQTTMessage(topic: topic, payload: self.message ?? "", qos: try parseQoS(qos), retain: retain)
        try await MQTTClient.withClient(configuration: try connection.configuration(), logger: connection.logger) { client in
            try await client.publish(message)
        }
    }
}

struct MQTTSub: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sub",
        abstract: "Print messages as they arrive, one payload a line, as mosquitto_sub does.",
        helpNames: [.long]
    )

    @OptionGroup var connection: MQTTConnectionOptions

    @Option(name: .customShort("t"), help: "Topic filter; repeat for several.")
    var filters: [String]

    @Option(name: .customShort("q"), help: "QoS: 0, 1 or 2.")
    var qos = 0

    @Option(name: .customShort("C"), help: "Exit after this many messages.")
    var count: Int?

    @Flag(name: .customShort("v"), help: "Print the topic before each payload.")
    var verbose = false

    func validate() throws {
        _ = try parseQoS(qos)
        for filter in filters { try MQTTTopic.validateFilter(filter) }
        if let count, count < 1 { throw ValidationError("-C takes a positive count") }
    }

    func run() async throws {
        let subscriptions = try filters.map { MQTTTopicSubscription(filter: $0, qos: try parseQoS(qos)) }
        let configuration = try connection.configuration()
        let (logger, limit, verbose) = (connection.logger, count, self.verbose)
        try await runUntilTerminated {
            try await MQTTClient.withClient(configuration: configuration, logger: logger) { client in
                let messages = client.messages()
                let codes = try await client.subscribe(subscriptions)
                if let refused = codes.first(where: \.isFailure) {
                    throw MQTTError(.subscriptionRefused, "the broker refused the subscription", reasonCode: refused)
                }
                var received = 0
                for await message in messages {
                    printLine(verbose ? "\(message.topic) \(message.payloadString)" : message.payloadString)
                    received += 1
                    if let limit, received >= limit { return }
                }
            }
        }
    }
}

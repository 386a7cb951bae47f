import ArgumentParser
import Foundation
import Logging
import TetherAlink
import TetherCLISupport
import TetherCore

struct ChannelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel",
        abstract: "The IoT channel: this machine as a device of the platform (Alink over MQTT), with requests, publications and subscriptions.",
        subcommands: [ChannelInvoke.self, ChannelPublish.self, ChannelUpload.self, ChannelSubscribe.self]
    )
}

/// The device triple and the broker every channel command connects with.
struct ChannelConnectionOptions: ParsableArguments {
    @Option(help: "Broker host: a Tether cloud's device gateway, or any broker speaking Alink.")
    var host = "127.0.0.1"

    @Option(help: "Broker port.")
    var port = 1883

    @Option(help: "The channel's ProductKey.")
    var productKey: String

    @Option(help: "The channel's DeviceName.")
    var deviceName: String

    @Option(help: "The channel's DeviceSecret (TETHER_DEVICE_SECRET in the environment keeps it out of the process list).")
    var deviceSecret: String?

    @Flag(help: "Keep the session and receive what was published while away.")
    var receiveOfflineMessages = false

    @Flag(help: "Log protocol details to standard error.")
    var debug = false

    func configuration(replyTimeout: Double? = nil) throws -> TetherChannelConfiguration {
        guard let secret = deviceSecret ?? ProcessInfo.processInfo.environment["TETHER_DEVICE_SECRET"], !secret.isEmpty else {
            throw ValidationError("--device-secret (or TETHER_DEVICE_SECRET) is required")
        }
        var configuration = TetherChannelConfiguration(
            host: host, port: port, device: try AlinkDeviceIdentity(productKey: productKey, deviceName: deviceName), deviceSecret: secret,
            receiveOfflineMessages: receiveOfflineMessages, reconnect: nil
        )
        if let replyTimeout {
            guard replyTimeout > 0, replyTimeout <= 3600 else { throw ValidationError("--timeout is 0 to 3600 seconds") }
            configuration.replyTimeout = .milliseconds(Int64(replyTimeout * 1000))
        }
        return configuration
    }

    var logger: Logger {
        var logger = Logger(label: "tether.channel")
        logger.logLevel = debug ? .debug : .warning
        return logger
    }

    /// Connects with these options, runs `body`, disconnects.
    func withChannel<Result: Sendable>(replyTimeout: Double? = nil, _ body: (TetherChannel) async throws -> Result) async throws -> Result {
        try await TetherChannel.withChannel(configuration: try configuration(replyTimeout: replyTimeout), logger: logger, body)
    }
}

func parseJSONOption(_ text: String, _ option: String) throws -> JSONValue {
    do {
        return try JSONValue.parse(Array(text.utf8))
    } catch {
        throw ValidationError("\(option) is not JSON: \(error.message)")
    }
}

struct ChannelInvoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoke",
        abstract: "Send a request on a topic and print the reply that comes on TOPIC_reply."
    )

    @OptionGroup var connection: ChannelConnectionOptions

    @Option(help: "The request's topic, e.g. /sys/PK/DN/thing/event/property/post.")
    var topic: String

    @Option(help: "The request's params, as JSON.")
    var params = "{}"

    @Option(help: "Fields beside params in the request, as a JSON object (e.g. {\"method\":\"thing.event.property.post\"}).")
    var extra = "{}"

    @Option(help: "Seconds to wait for the reply.")
    var timeout: Double?

    @Flag(help: "Print the reply as one JSON object (id, code, data, message).")
    var json = false

    func run() async throws {
        let params = try parseJSONOption(params, "--params")
        guard let extra = try parseJSONOption(extra, "--extra").objectValue else { throw ValidationError("--extra is a JSON object") }
        let reply = try await connection.withChannel(replyTimeout: timeout) { channel in
            try await channel.invoke(topic: topic, params: params, options: ChannelInvokeOptions(extraParams: extra))
        }
        if json {
            printJSON(["id": .string(reply.id), "code": .int(Int64(reply.code)), "data": reply.data, "message": .string(reply.message)])
        } else {
            printLine("\(reply.code) \(reply.message): \(reply.data.serialized())")
        }
    }
}

struct ChannelPublish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish params in the request envelope on a topic; no reply is awaited."
    )

    @OptionGroup var connection: ChannelConnectionOptions

    @Option(help: "The topic.")
    var topic: String

    @Option(help: "The params, as JSON.")
    var params = "{}"

    func run() async throws {
        let params = try parseJSONOption(params, "--params")
        try await connection.withChannel { channel in
            try await channel.publish(topic: topic, params: params)
        }
    }
}

struct ChannelUpload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Send bytes on a topic as they are (no envelope), from --data or standard input."
    )

    @OptionGroup var connection: ChannelConnectionOptions

    @Option(help: "The topic.")
    var topic: String

    @Option(help: "The bytes, as text; standard input when omitted.")
    var data: String?

    func run() async throws {
        let bytes = data.map { Array($0.utf8) } ?? Array(FileHandle.standardInput.readDataToEndOfFile())
        try await connection.withChannel { channel in
            try await channel.uploadData(topic: topic, data: bytes)
        }
    }
}

struct ChannelSubscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Subscribe to a topic (filter) and print what arrives on it."
    )

    @OptionGroup var connection: ChannelConnectionOptions

    @Option(help: "The topic filter (+ and # allowed).")
    var topic: String

    @Option(help: "Exit after this many messages.")
    var count: Int?

    @Flag(help: "Print each message as one JSON object (topic, and payload as JSON when it is, as text otherwise).")
    var json = false

    func run() async throws {
        if let count, count < 1 { throw ValidationError("--count is at least 1") }
        try await connection.withChannel { channel in
            let messages = channel.messages()
            try await channel.subscribe(topic: topic)
            // Said on standard error, so that a script knows when to publish.
            printError("subscribed to \(topic)")
            var received = 0
            for await message in messages {
                if json {
                    printJSON(["topic": .string(message.topic), "payload": message.json ?? .string(String(decoding: message.payload, as: UTF8.self))])
                } else {
                    printLine("\(message.topic) \(String(decoding: message.payload, as: UTF8.self))")
                }
                received += 1
                if let count, received >= count { return }
            }
        }
    }
}

import ArgumentParser
import Tether
import TetherCLISupport

struct RRPCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rrpc",
        abstract: "Call a device on the cloud's gateway synchronously (Alink RRPC) and print its answer."
    )

    @OptionGroup var options: CloudClientOptions

    @Argument(help: "The device's did.")
    var did: String

    @OptionGroup(title: "The request") var request: PayloadOptions

    @Option(name: .long, help: "One of the device's own topics, for a custom RRPC (/PK/DN/user/…); without it, a system RRPC.")
    var topic: String?

    @Option(name: .customLong("answer-timeout"), help: "Seconds the cloud waits for the device's answer (0.1 to 30).")
    var answerTimeout: Double = 5

    @Flag(name: .long, help: "Print {\"payload_base64\", \"text\"} as JSON (text when the answer is UTF-8).")
    var json = false

    func validate() throws {
        guard answerTimeout.isFinite, (0.1...30).contains(answerTimeout) else { throw ValidationError("--answer-timeout takes 0.1 to 30 seconds") }
    }

    func run() async throws {
        let bytes = request.bytes
        let (did, topic, timeout) = (self.did, self.topic, Duration.milliseconds(Int64((answerTimeout * 1000).rounded())))
        let answer = try await options.withClient(lanDiscovery: false) { client -> [UInt8] in
            let device = try await client.refreshBindings().first { $0.did == did }
            guard let device else { throw TetherError(.invalidArgument, "\(did) is not bound to you") }
            return try await device.rrpc(bytes, topic: topic, timeout: timeout)
        }
        let text = String(validating: answer, as: UTF8.self)
        if json {
            var object: JSONObject = ["payload_base64": .string(answer.tetherBase64)]
            if let text { object["text"] = .string(text) }
            printJSON(.object(object))
        } else {
            printLine(text ?? answer.tetherHex)
        }
    }
}

import ArgumentParser
import Foundation
import Histogram
import Logging
import TetherCore

/// What linkage rules cost the gateway (issue 16: the cost per report at 1,000 rules), against a
/// `tether-cloud serve` process: devices post as fast as their replies come back, first with no
/// rule, then with `--rules` data rules spread over the posting devices (each evaluated on every
/// report of its device: its condition read from the device's latest status, never true, so that
/// the figure is the evaluation's cost and not the outputs'). Reports both rates and the
/// difference per report.
struct RuleLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rules")

    @Option(help: "The JSON file setup wrote.") var setup: String
    @Option(help: "The server's HTTP port.") var http: Int
    @Option(help: "The server's MQTT port.") var mqtt: Int
    @Option(help: "Rules to write (100 per user).") var rules = 1_000
    @Option(help: "Devices posting.") var posters = 100
    @Option(help: "Seconds of posting, each phase.") var duration: Double = 10

    func run() async throws {
        let document = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: setup))))
        let devices = try (document["devices"]?.arrayValue ?? []).map { try BenchDevice($0) }
        guard devices.count >= posters, let appID = document["appId"]?.stringValue, let productKey = document["productKey"]?.stringValue else {
            throw ValidationError("\(setup) is not what setup writes, or has fewer than \(posters) devices")
        }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let posting = Array(devices.prefix(posters))

        let without = try await Run.measurePosts(posting, mqtt: mqtt, duration: duration, logger: logger)
        let base = "http://127.0.0.1:\(http)"
        var written = 0
        while written < rules {
            let user = try await Run.registerAndBind(appID: appID, devices: posting, http: http)
            let headers = ["X-Gizwits-Application-Id": appID, "X-Gizwits-User-token": user.token]
            for _ in 0..<min(100, rules - written) {
                let device = posting[written % posting.count]
                let rule: JSONValue = [
                    "name": .string("bench \(written)"), "did": .string(device.did), "product_key": .string(productKey), "event": "data",
                    "input": [["did": .string(device.did), "product_key": .string(productKey), "prefix": "d"]],
                    "condition": [[["left": "d.Brightness", "opt": ">", "right": "100"]]],
                    "output": [[["type": "devctrl", "did": .string(device.did), "attrs": ["LightSwitch": true]]]],
                ]
                let answer = try await Run.post(base + "/app/rules", rule, headers: headers)
                guard answer["rule_id"]?.stringValue != nil else { throw ValidationError("a rule was refused: \(answer.serialized())") }
                written += 1
            }
        }
        // The gateway reads which devices rules watch at most a second late.
        try await Task.sleep(for: .seconds(2))
        let with = try await Run.measurePosts(posting, mqtt: mqtt, duration: duration, logger: logger)
        let rateWithout = Double(without.stored) / duration
        let rateWith = Double(with.stored) / duration
        let report: JSONValue = [
            "rules": .int(Int64(rules)), "devices": .int(Int64(posters)), "rulesPerReport": .double(Double(rules) / Double(posters)),
            "withoutRules": [
                "perSecond": .double(rateWithout), "errors": .int(Int64(without.errors)),
                "replyP50Microseconds": .int(Int64(without.latency.valueAtPercentile(50))),
            ],
            "withRules": [
                "perSecond": .double(rateWith), "errors": .int(Int64(with.errors)), "replyP50Microseconds": .int(Int64(with.latency.valueAtPercentile(50))),
            ],
            "ratio": .double(rateWith / max(rateWithout, 1)),
            "costPerReportMicroseconds": .double(rateWith > 0 && rateWithout > 0 ? (1 / rateWith - 1 / rateWithout) * 1_000_000 : 0),
        ]
        print(report.serialized(pretty: true))
    }
}

import ArgumentParser
import Foundation
import Histogram
import Logging
import Tether

/// Write → report round trip through `TetherClient` against a running local stack
/// (`tether-cloud dev`, started by scripts/bench-sdk.sh): the same device, once over the LAN and
/// once through the cloud, in one run.
struct SDKRoundTrip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdk-round-trip",
        abstract: "Time Device.write (acknowledged, with the report that answers it) over the LAN and through the cloud."
    )

    @Option(help: "The stack's state directory (its stack.json names the app and the devices).")
    var state: String

    @Option(help: "The cloud's URL.")
    var cloud: String

    @Option(name: .customLong("udp-port"), help: "The devices' discovery port.")
    var udpPort: Int

    @Option(name: .customLong("tcp-port"), help: "The devices' control port.")
    var tcpPort: Int

    @Option(name: .customLong("round-trips"), help: "Writes to time on each path (a tenth more are made first, untimed).")
    var writes = 1_000

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let stack = try JSONValue.parse(try String(contentsOfFile: "\(state)/stack.json", encoding: .utf8))
        guard let appID = stack["appId"]?.stringValue, let did = stack["devices"]?.arrayValue?.first?["did"]?.stringValue else {
            throw ValidationError("\(state)/stack.json names no app or device")
        }
        let lan = try await roundTrips(appID: appID, did: did, discovery: true, expected: .lan)
        let cloud = try await roundTrips(appID: appID, did: did, discovery: false, expected: .cloud)
        let rows: [(String, Histogram<UInt64>)] = [("LAN", lan), ("cloud", cloud)]
        if json {
            var object = JSONObject()
            for (name, histogram) in rows {
                object[name.lowercased()] = ["p50_us": .int(Int64(histogram.valueAtPercentile(50))), "p99_us": .int(Int64(histogram.valueAtPercentile(99))), "max_us": .int(Int64(histogram.max))]
            }
            print(JSONValue.object(object).serialized())
        } else {
            print("SDK write → report round trip, \(writes) writes each, microseconds")
            print("path    p50     p99     max")
            for (name, histogram) in rows {
                print("\(name.padding(toLength: 6, withPad: " ", startingAt: 0))  \(histogram.valueAtPercentile(50))  \(histogram.valueAtPercentile(99))  \(histogram.max)")
            }
            print(String(format: "cloud / LAN at p50: %.1fx", Double(cloud.valueAtPercentile(50)) / Double(max(lan.valueAtPercentile(50), 1))))
        }
    }

    /// Logs in as the stack's demo user, subscribes to `did` and times writes, checking that they
    /// take the `expected` path.
    func roundTrips(appID: String, did: String, discovery: Bool, expected: ControlPath) async throws -> Histogram<UInt64> {
        var quiet = Logger(label: "bench")
        quiet.logLevel = .critical
        let configuration = TetherClient.Configuration(
            products: [],
            lan: LANConfiguration(
                discoveryEnabled: discovery, discoveryTargets: [LANEndpoint(host: "127.0.0.1", port: udpPort)],
                discoveryInterval: .milliseconds(200), tcpPort: tcpPort
            ),
            cloud: .init(endpoint: try CloudEndpoint(url: cloud), appID: appID, sessionStore: MemorySessionStore())
        )
        let writes = self.writes
        return try await withTetherClient(configuration: configuration, logger: quiet) { client in
            try await client.account!.login(username: "demo", password: "tether-demo-1")
            try await client.refreshBindings()
            guard let device = client.device(did: did) else { throw ValidationError("device \(did) is not bound to the demo user") }
            let deadline = ContinuousClock.now + .seconds(10)
            while discovery && !device.isOnLAN && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            try await device.subscribe()
            guard device.controlPath == expected else { throw ValidationError("the device is controlled over \(String(describing: device.controlPath)), not \(expected)") }
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            let clock = ContinuousClock()
            for index in 0..<(writes + writes / 10) {
                let speed = DataValue.int(Int64(index % 10) - 5)
                var result: WriteResult?
                let elapsed: Duration
                do {
                    elapsed = try await clock.measure { result = try await device.write(["Motor_Speed": speed]) }
                } catch {
                    throw ValidationError("write \(index) over the \(expected) failed: \(error)")
                }
                guard result?.status?.data["Motor_Speed"] == speed else { throw ValidationError("write \(index) came back without its report") }
                if index >= writes / 10 {
                    let (seconds, attoseconds) = elapsed.components
                    histogram.record(UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000))
                }
            }
            guard device.controlPath == expected else { throw ValidationError("the path changed during the run") }
            return histogram
        }
    }
}

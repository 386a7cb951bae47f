import ArgumentParser
import Histogram
import NIOCore
import Logging
import Tether
import TetherAgent

/// Measures the P0 codec and the LAN write round trip. Numbers, not assertions: see the README's
/// performance section for what they were on the reference machine.
@main
struct TetherBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-benchmarks",
        abstract: "Tether performance measurements: the P0 codec and the LAN write round trip (in-process); sdk-round-trip against a local stack.",
        subcommands: [SDKRoundTrip.self, TuyaRoundTrip.self, OnboardingCosts.self, LW003Parse.self, BLELatency.self]
    )

    @Option(help: "Codec operations per timing run.")
    var codecIterations = 200_000

    @Option(help: "LAN writes to time.")
    var writes = 2_000

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let codec = try P0Codec(model: BenchmarkProducts.thermostat)
        let status = DeviceStatus(values: BenchmarkProducts.thermostatState, model: codec.model)
        let encoded = try codec.encode(.report(status))

        let encodeNanoseconds = try Self.nanosecondsPerOperation(iterations: codecIterations) {
            _ = try codec.encode(.report(status))
        }
        let decodeNanoseconds = try Self.nanosecondsPerOperation(iterations: codecIterations) {
            _ = try codec.decode(encoded)
        }
        let writeLatency = try await Self.lanWriteRoundTrip(writes: writes)

        if json {
            print(
                JSONValue.object([
                    "p0EncodeStatusNanoseconds": .double(encodeNanoseconds),
                    "p0DecodeStatusNanoseconds": .double(decodeNanoseconds),
                    "p0StatusBytes": .int(Int64(encoded.readableBytes)),
                    "lanWriteRoundTripMicroseconds": .object([
                        "p50": .int(Int64(writeLatency.valueAtPercentile(50))),
                        "p99": .int(Int64(writeLatency.valueAtPercentile(99))),
                        "max": .int(Int64(writeLatency.max)),
                        "count": .int(Int64(writeLatency.totalCount)),
                    ]),
                ]).serialized(pretty: true))
            return
        }
        print("P0 status of the 10-data-point thermostat (\(encoded.readableBytes) bytes):")
        print("  encode  \(Self.format(encodeNanoseconds)) ns per status")
        print("  decode  \(Self.format(decodeNanoseconds)) ns per status")
        print("LAN write round trip (write with sn → 0x0094), loopback, \(writeLatency.totalCount) writes:")
        print("  p50 \(writeLatency.valueAtPercentile(50)) µs   p99 \(writeLatency.valueAtPercentile(99)) µs   max \(writeLatency.max) µs")
    }

    /// The median, over 5 runs, of the time per operation.
    static func nanosecondsPerOperation(iterations: Int, _ operation: () throws -> Void) throws -> Double {
        for _ in 0..<(iterations / 10) { try operation() }
        var runs: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<5 {
            let elapsed = try clock.measure {
                for _ in 0..<iterations { try operation() }
            }
            let (seconds, attoseconds) = elapsed.components
            runs.append((Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(iterations))
        }
        return runs.sorted()[runs.count / 2]
    }

    /// Write → acknowledgement latency through the SDK to an in-process device agent on loopback.
    static func lanWriteRoundTrip(writes: Int) async throws -> Histogram<UInt64> {
        let model = BenchmarkProducts.thermostat
        var generator = SplitMix64(seed: 42)
        let device = try VirtualDevice(model: model, identity: .random(productKey: model.productKey, using: &generator), bindable: true)
        var quiet = Logger(label: "bench")
        quiet.logLevel = .critical
        let server = LANDeviceServer(
            device: device, configuration: .init(host: "127.0.0.1", udpPort: 0, tcpPort: 0, announcementTarget: .some(nil)), logger: quiet)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let addresses = try await server.addresses()
            let lan = LANConfiguration(discoveryEnabled: false)
            let histogram = try await withTetherClient(configuration: .init(products: [model], lan: lan), logger: quiet) { client in
                let target = client.device(host: addresses.host, port: addresses.tcpPort)
                try await target.subscribe()
                var histogram = Histogram<UInt64>(highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: .three)
                let clock = ContinuousClock()
                for index in 0..<(writes + writes / 10) {
                    let value = DataValue.double(Double(150 + index % 100) / 10)
                    let elapsed = try await clock.measure { try await target.write(["TargetTemperature": value], sn: UInt32(index + 1)) }
                    if index >= writes / 10 {
                        let (seconds, attoseconds) = elapsed.components
                        histogram.record(UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000))
                    }
                }
                return histogram
            }
            group.cancelAll()
            return histogram
        }
    }

    static func format(_ value: Double) -> String {
        String(Int(value.rounded()))
    }
}

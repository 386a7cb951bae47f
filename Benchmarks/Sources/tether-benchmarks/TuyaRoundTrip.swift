import ArgumentParser
import Foundation
import Histogram
import NIOCore
import Tether

/// Write → acknowledgement round trips through the SDK (`Device.write` on a subscribed Tuya device,
/// by DP id) to a device on loopback (the agent's, or tuyamock: scripts/bench-tuya.sh starts both),
/// and the codec's cost per frame.
struct TuyaRoundTrip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tuya-round-trip", abstract: "Time Device.write on a subscribed Tuya device, and the Tuya codec per frame.")

    @Option(help: "The device's address.") var host = "127.0.0.1"
    @Option(help: "The device's TCP port.") var port: Int
    @Option(help: "The device's id.") var id: String
    @Option(name: .customLong("local-key"), help: "The local key.") var localKey: String
    @Option(help: "The protocol version.") var version: String
    @Option(help: "The data point written (alternately true and false).") var dp = "1"
    // Not --writes and --json: the parent command has those, and would take them.
    @Option(name: .customLong("round-trips"), help: "Writes to time (a tenth more first, untimed).") var writes = 1_000
    @Option(help: "text or json.") var format = "text"

    func run() async throws {
        guard let version = TuyaVersion(rawValue: version) else { throw ValidationError("--version is 3.1 to 3.5") }
        let address = try TuyaDeviceAddress(host: host, port: port, deviceID: id, localKey: Array(localKey.utf8), version: version)
        let (writes, dp) = (self.writes, self.dp)
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        let clock = ContinuousClock()
        let configuration = TetherClient.Configuration(lan: LANConfiguration(discoveryEnabled: false), tuya: TuyaConfiguration(requestTimeout: .seconds(10)))
        histogram = try await withTetherClient(configuration: configuration) { client in
            var histogram = histogram
            let device = try client.tuyaDevice(
                host: address.host, port: address.port, id: address.deviceID, localKey: TuyaLocalKey(bytes: address.localKey), version: version)
            try await device.subscribe()
            for index in 0..<(writes + writes / 10) {
                let start = clock.now
                try await device.write([dp: .bool(index % 2 == 0)])
                let (seconds, attoseconds) = (clock.now - start).components
                if index >= writes / 10 { histogram.record(UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)) }
            }
            return histogram
        }
        let codec = try TuyaCodec(version: version, key: Array(localKey.utf8), sender: .device)
        let reader = try TuyaCodec(version: version, key: Array(localKey.utf8), sender: .app)
        let message = TuyaMessage(
            sequence: 1, command: .status, returnCode: 0, payload: TuyaStatus(dps: ["1": true, "2": 50, "3": "white"], time: 1_700_000_000).payload(deviceID: id, version: version))
        let frame = try codec.encode(message)
        let encode = try TetherBenchmarks.nanosecondsPerOperation(iterations: 20_000) { _ = try codec.encode(message) }
        let decode = try TetherBenchmarks.nanosecondsPerOperation(iterations: 20_000) {
            var buffer = frame
            _ = try reader.decode(&buffer)
        }
        if format == "json" {
            print(JSONValue.object([
                "version": .string(version.rawValue),
                "writeRoundTripMicroseconds": .object([
                    "p50": .int(Int64(histogram.valueAtPercentile(50))), "p99": .int(Int64(histogram.valueAtPercentile(99))),
                    "max": .int(Int64(histogram.max)), "count": .int(Int64(histogram.totalCount)),
                ]),
                "encodeStatusNanoseconds": .double(encode), "decodeStatusNanoseconds": .double(decode), "statusFrameBytes": .int(Int64(frame.readableBytes)),
            ]).serialized())
            return
        }
        print("Tuya \(version) write round trip, \(histogram.totalCount) writes: p50 \(histogram.valueAtPercentile(50)) µs, p99 \(histogram.valueAtPercentile(99)) µs")
        print("  status frame (\(frame.readableBytes) bytes): encode \(TetherBenchmarks.format(encode)) ns, decode \(TetherBenchmarks.format(decode)) ns")
    }
}

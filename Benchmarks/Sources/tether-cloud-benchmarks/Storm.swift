import ArgumentParser
import Foundation
import Histogram
import Logging
import TetherAlink
import TetherCore
import TetherMQTT

/// A fleet coming online at once and staying online: devices of the setup file connect to the
/// given gateways (in turn) all at once, each signed with its own secret and holding the
/// gateway's usual subscriptions, then post a property report every `--post-interval` seconds
/// (spread over the interval) until `--hold` seconds have passed. One process holds at most
/// about 19,000 (its file descriptors); `scripts/bench-scale.sh` runs several.
///
/// Prints one JSON line when every device is connected (`"phase": "connected"`), and one at the
/// end with the posts answered and the connections lost.
struct Storm: AsyncParsableCommand {
    @Option(help: "The file `setup` wrote.") var setup: String
    @Option(help: "The gateways' MQTT ports on 127.0.0.1, comma-separated: devices are spread over them in turn.") var mqtt: String
    @Option(help: "The first device of the setup file this process connects.") var first = 0
    @Option(help: "How many devices this process connects.") var count: Int
    @Option(help: "MQTT keep-alive, seconds.") var keepAlive: UInt16 = 60
    @Option(help: "Seconds between a device's property reports (0: none).") var postInterval: Double = 60
    @Option(help: "Seconds to stay connected once all are (0: leave at once).") var hold: Double = 0
    @Option(help: "Connections opened at once at most (the rest wait for a slot).") var concurrency = 1_000

    /// Tries per device: a connection refused or timed out is tried again after a random
    /// pause of 1 to 5 s, as devices do.
    static let attempts = 5

    private struct Counters: Sendable {
        var connected = 0
        var retries = 0
        var lost = 0
        var answered = 0
        var refused = 0
        var postErrors = 0
        /// Why connections ended while held, by the client's error code ("closed" when the
        /// broker closed it): tells a broker too busy to answer PINGREQ from one that drops.
        var closes: [String: Int] = [:]
        var failures: [String] = []
    }

    func run() async throws {
        let ports = mqtt.split(separator: ",").compactMap { Int($0) }
        guard !ports.isEmpty else { throw ValidationError("--mqtt needs at least one port") }
        let document = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: setup))))
        let all = try (document["devices"]?.arrayValue ?? []).map { try BenchDevice($0) }
        guard first >= 0, count > 0, first + count <= all.count else {
            throw ValidationError("setup has \(all.count) devices; asked for \(first)..<\(first + count)")
        }
        let devices = Array(all[first..<(first + count)])
        let logger = {
            var logger = Logger(label: "storm")
            logger.logLevel = .critical
            return logger
        }()
        let counters = Locked(Counters())
        let connectLatency = Locked(Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .two))
        let allSettled = AsyncPromise<Void, Never>()
        // Connection attempts in flight: a token per free slot, taken before an attempt and
        // given back once the device is admitted or gives up.
        let (slots, freeSlot) = AsyncStream<Void>.makeStream()
        for _ in 0..<concurrency { freeSlot.yield() }
        var nextSlot = slots.makeAsyncIterator()
        let start = ContinuousClock.now
        let (keepAlive, postInterval, hold, total, first) = (keepAlive, postInterval, hold, count, first)
        // Every device either connected or gave up: the fleet is as online as it will get.
        let settle = { @Sendable (update: (inout Counters) -> Void) in
            let settled = counters.withLock { counters in
                update(&counters)
                counters.connected += 1
                return counters.connected == total
            }
            if settled { allSettled.resolve(.success(())) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, device) in devices.enumerated() {
                guard await nextSlot.next() != nil else { throw CancellationError() }
                let configuration = {
                    var configuration = device.configuration(port: ports[(first + index) % ports.count], replyTimeout: .seconds(60))
                    configuration.keepAlive = keepAlive
                    // A storm queues connections for many seconds: giving up at 10 s (the SDK's
                    // default) only adds retries to the queue.
                    configuration.connectTimeout = .seconds(30)
                    return configuration
                }()
                group.addTask {
                    let begun = ContinuousClock.now
                    var admitted = false
                    for attempt in 1...Self.attempts {
                        do {
                            try await AlinkDeviceClient.withClient(configuration: configuration, logger: logger) { client in
                                admitted = true
                                connectLatency.withLock { _ = $0.record(Run.microseconds(since: begun)) }
                                freeSlot.yield()
                                settle { _ in }
                                // Counted from the start: a connection can end while the rest of the fleet connects.
                                try await withThrowingTaskGroup(of: Void.self) { watch in
                                    watch.addTask { await Self.countCloses(client, counters: counters) }
                                    _ = await allSettled.result(ifCancelled: { .success(()) })
                                    try await Self.stay(client, index: index, postInterval: postInterval, hold: hold, counters: counters)
                                    watch.cancelAll()
                                }
                            }
                            return
                        } catch {
                            if admitted { return }
                            if attempt == Self.attempts {
                                freeSlot.yield()
                                settle { if $0.failures.count < 5 { $0.failures.append("\(device.did): \(error)") } }
                                return
                            }
                            counters.withLock { $0.retries += 1 }
                            try? await Task.sleep(for: .milliseconds(Int.random(in: 1_000...5_000)))
                        }
                    }
                }
            }
            _ = await allSettled.result(ifCancelled: { .success(()) })
            let latency = connectLatency.withLock { $0 }
            let line: JSONValue = [
                "phase": "connected", "devices": .int(Int64(total)), "failed": .int(Int64(total) - Int64(latency.totalCount)),
                "seconds": .double(Run.seconds(since: start)), "retries": .int(Int64(counters.withLock { $0.retries })),
                "connectMillisecondsP50": .double(Double(latency.valueAtPercentile(50)) / 1000),
                "connectMillisecondsP99": .double(Double(latency.valueAtPercentile(99)) / 1000),
            ]
            // Unbuffered: the script waiting for this line reads a file.
            FileHandle.standardOutput.write(Data((line.serialized() + "\n").utf8))
            try await group.waitForAll()
        }
        let final = counters.withLock { $0 }
        let end: JSONValue = [
            "phase": "done", "devices": .int(Int64(total)), "postsAnswered": .int(Int64(final.answered)), "postsRefused": .int(Int64(final.refused)),
            "postErrors": .int(Int64(final.postErrors)), "connectionsLost": .int(Int64(final.lost)),
            "connectionsClosedBy": .object(
                final.closes.sorted { $0.key < $1.key }.reduce(into: JSONObject()) { object, close in object[close.key] = .int(Int64(close.value)) }),
            "failures": .array(final.failures.map(JSONValue.string)),
        ]
        print(end.serialized())
    }

    /// Counts the ends of `client`'s connections by cause until cancelled.
    private static func countCloses(_ client: AlinkDeviceClient, counters: Locked<Counters>) async {
        for await event in client.mqtt.events() {
            guard case .disconnected(let error) = event else { continue }
            let cause = error.map { "\($0.code)" } ?? "closed"
            counters.withLock { $0.closes[cause, default: 0] += 1 }
        }
    }

    /// Stays connected, posting a report every `postInterval` seconds (the fleet's reports
    /// spread over the interval), until `hold` seconds have passed.
    private static func stay(_ client: AlinkDeviceClient, index: Int, postInterval: Double, hold: Double, counters: Locked<Counters>) async throws {
        guard postInterval > 0 else {
            try await Task.sleep(for: .seconds(hold))
            return
        }
        let offset = Double(index % 1000) / 1000 * postInterval
        try await Task.sleep(for: .seconds(min(offset, hold)))
        let end = ContinuousClock.now + .seconds(max(hold - offset, 0))
        var value: Int64 = 0
        while ContinuousClock.now < end, client.mqtt.isConnected {
            value = (value + 1) % 101
            do {
                let reply = try await client.postProperties(["Brightness": .int(value)])
                counters.withLock { reply.isSuccess ? ($0.answered += 1) : ($0.refused += 1) }
            } catch {
                counters.withLock { $0.postErrors += 1 }
            }
            try await Task.sleep(until: min(ContinuousClock.now + .seconds(postInterval), end))
        }
        if !client.mqtt.isConnected { counters.withLock { $0.lost += 1 } }
    }
}

import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import TetherCLISupport
import TetherCore
import TetherMQTT

struct MQTTBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load any MQTT broker and report throughput, latency and errors.",
        discussion: """
            fan-in: --publishers connections publish to bench/<n>, one subscriber takes bench/#. \
            fan-out: one publisher, --subscribers connections subscribed to bench/0. Messages carry \
            their send time, so latency is publish → delivery. The first second is not counted. \
            --idle N instead opens N idle connections, prints "ready N" and holds them (for \
            measuring a broker's memory per connection).
            """,
        helpNames: [.long]
    )

    enum Mode: String, ExpressibleByArgument { case fanIn = "fan-in", fanOut = "fan-out" }

    @Option(name: .customShort("h"), help: "Broker host.")
    var host = "127.0.0.1"

    @Option(name: .customShort("p"), help: "Broker port.")
    var port = 1883

    @Option(name: .customShort("V"), help: "Protocol version: 311 or 5.")
    var protocolVersion = "311"

    @Option(help: "fan-in or fan-out.")
    var mode = Mode.fanIn

    @Option(help: "Publishing connections (fan-in).")
    var publishers = 50

    @Option(help: "Subscribing connections (fan-out).")
    var subscribers = 10

    @Option(name: .customShort("q"), help: "QoS of publications and subscriptions: 0 or 1.")
    var qos = 0

    @Option(help: "Payload bytes (at least 8: the send time).")
    var size = 64

    @Option(help: "Messages a second in all, spread over the publishers; 0: as fast as possible.")
    var rate: Double = 0

    @Option(help: "Seconds measured (after one second of warm-up).")
    var duration: Double = 10

    @Option(help: "Stop after this many messages received, if earlier.")
    var count: Int?

    @Option(help: "Unacknowledged QoS 1 messages per publisher.")
    var window = 64

    @Option(help: "Open this many idle connections and hold them instead of publishing.")
    var idle: Int?

    @Option(help: "Seconds to hold idle connections (0: until interrupted).")
    var hold: Double = 0

    @Option(name: .customLong("idle-keep-alive"), help: "Keep-alive of idle connections, seconds (0: none).")
    var idleKeepAlive: UInt16 = 900

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard qos == 0 || qos == 1 else { throw ValidationError("-q takes 0 or 1") }
        guard (1...10_000).contains(publishers), (1...10_000).contains(subscribers) else {
            throw ValidationError("--publishers and --subscribers take 1…10000")
        }
        guard size >= 8, size <= 1 << 20 else { throw ValidationError("--size takes 8…1048576 bytes") }
        if let problem = problemWithSeconds(duration, option: "--duration", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
        if let problem = problemWithSeconds(hold, option: "--hold", maximum: 86_400) { throw ValidationError(problem) }
        guard rate.isFinite, rate >= 0 else { throw ValidationError("--rate takes a number of messages a second") }
        if let idle, !(1...100_000).contains(idle) { throw ValidationError("--idle takes 1…100000") }
    }

    var version: MQTTVersion { protocolVersion.contains("5") ? .v5 : .v311 }

    func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        // Subscribers measure; they get an event loop of their own so that publishers flooding
        // theirs cannot delay a read and distort latency or throughput.
        let measuring = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { measuring.shutdownGracefully { _ in } }
        if let idle {
            try await holdIdle(idle, group: group)
            return
        }
        let qos = MQTTQoS(rawValue: UInt8(self.qos))!
        let run = UUID().uuidString.prefix(6)
        let publisherCount = mode == .fanIn ? publishers : 1
        let subscriberCount = mode == .fanIn ? 1 : subscribers
        var subscriberConnections: [(any Channel, BenchConnection)] = []
        for index in 0..<subscriberCount {
            let (channel, connection) = try await BenchConnection.open(
                host: host, port: port, version: version, clientID: "bench-sub-\(run)-\(index)", keepAlive: 300, group: measuring)
            let filter = mode == .fanIn ? "bench/\(run)/#" : "bench/\(run)/0"
            try await channel.writeAndFlush(
                try MQTTPacket.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: filter, qos: qos)])).bytes(version: version))
            try await connection.subscribed.futureResult.get()
            subscriberConnections.append((channel, connection))
        }
        var publisherList: [BenchPublisher] = []
        for index in 0..<publisherCount {
            let (channel, connection) = try await BenchConnection.open(
                host: host, port: port, version: version, clientID: "bench-pub-\(run)-\(index)", keepAlive: 300, group: group)
            publisherList.append(
                BenchPublisher(
                    channel: channel, connection: connection, topic: "bench/\(run)/\(index)", qos: qos, payloadSize: size, window: window,
                    rate: rate / Double(publisherCount)))
        }
        for publisher in publisherList { publisher.start() }
        try await Task.sleep(for: .seconds(1))
        for (_, connection) in subscriberConnections { connection.recording.store(true, ordering: .relaxed) }
        let sentBefore = await publisherList.asyncSum { await $0.sentCount }
        let clock = ContinuousClock()
        let started = clock.now
        let limit = count
        while clock.now - started < .milliseconds(Int(duration * 1000)) {
            try await Task.sleep(for: .milliseconds(100))
            if let limit, subscriberConnections.reduce(0, { $0 + $1.1.stats.withLock { $0.received } }) >= limit { break }
        }
        for (_, connection) in subscriberConnections { connection.recording.store(false, ordering: .relaxed) }
        let elapsed = clock.now - started
        let sentAfter = await publisherList.asyncSum { await $0.sentCount }
        for publisher in publisherList { await publisher.stop() }
        var received = 0
        var errors = 0
        var latencies: [UInt32] = []
        for (_, connection) in subscriberConnections {
            connection.stats.withLock { stats in
                received += stats.received
                errors += stats.errors
                latencies += stats.latencies
            }
        }
        for publisher in publisherList { errors += publisher.connection.stats.withLock { $0.errors } }
        for (channel, _) in subscriberConnections { try? await channel.close() }
        for publisher in publisherList { try? await publisher.channel.close() }
        latencies.sort()
        func percentile(_ p: Double) -> Int { latencies.isEmpty ? 0 : Int(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var report = JSONObject()
        report["mode"] = .string(mode.rawValue)
        report["qos"] = .int(Int64(qos.rawValue))
        report["publishers"] = .int(Int64(publisherCount))
        report["subscribers"] = .int(Int64(subscriberCount))
        report["payloadBytes"] = .int(Int64(size))
        report["seconds"] = .double((seconds * 100).rounded() / 100)
        report["sent"] = .int(Int64(sentAfter - sentBefore))
        report["received"] = .int(Int64(received))
        report["messagesPerSecond"] = .int(Int64(Double(received) / seconds))
        var latency = JSONObject()
        latency["p50"] = .int(Int64(percentile(0.5)))
        latency["p99"] = .int(Int64(percentile(0.99)))
        latency["max"] = .int(Int64(latencies.last ?? 0))
        report["latencyMicroseconds"] = .object(latency)
        report["errors"] = .int(Int64(errors))
        if json {
            printJSON(.object(report))
        } else {
            printLine("\(mode.rawValue) QoS \(qos.rawValue): \(publisherCount) → \(subscriberCount), \(size) B, \(String(format: "%.1f", seconds)) s")
            printLine("  received \(received) (\(Int(Double(received) / seconds)) msg/s), sent \(sentAfter - sentBefore), errors \(errors)")
            printLine("  latency p50 \(percentile(0.5)) µs, p99 \(percentile(0.99)) µs, max \(latencies.last ?? 0) µs")
        }
    }

    /// Opens `count` idle connections, 200 at a time, and holds them.
    private func holdIdle(_ count: Int, group: any EventLoopGroup) async throws {
        var channels: [any Channel] = []
        channels.reserveCapacity(count)
        let run = UUID().uuidString.prefix(6)
        var opened = 0
        while opened < count {
            let batch = min(200, count - opened)
            let start = opened
            let result = try await withThrowingTaskGroup(of: (any Channel).self) { tasks in
                for index in start..<(start + batch) {
                    tasks.addTask {
                        try await BenchConnection.open(
                            host: host, port: port, version: version, clientID: "idle-\(run)-\(index)", keepAlive: idleKeepAlive, group: group
                        ).0
                    }
                }
                return try await tasks.reduce(into: [any Channel]()) { $0.append($1) }
            }
            channels += result
            opened += batch
        }
        printLine("ready \(channels.count)")
        if hold > 0 {
            try await Task.sleep(for: .milliseconds(Int(hold * 1000)))
        } else {
            try await runUntilTerminated { try await Task.sleep(for: .seconds(86_400)) }
        }
        for channel in channels { try? await channel.close() }
    }
}

extension Array {
    func asyncSum(_ value: (Element) async -> Int) async -> Int {
        var total = 0
        for element in self { total += await value(element) }
        return total
    }
}

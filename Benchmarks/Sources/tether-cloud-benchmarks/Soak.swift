import ArgumentParser
import Foundation
import Logging
import TetherCloud
import TetherCore

/// A fault soak against running cloud nodes that share one database (`scripts/soak.sh` starts
/// them, kills them and runs this): devices with faults, apps writing and reading, then the
/// checks (`SoakChecks`, `SoakPresenceWatch`). Prints the counts as JSON and a verdict, and
/// exits 1 on a violation.
///
/// Phases: every device connects; chaos (faults, writes, the script's kills) for `duration`;
/// settling (no new faults or writes; devices come back, the ledger reaches its final states);
/// every device leaves; 1.5 × keep-alive later, a last look at presence.
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Devices with faults and apps against cloud nodes, then checks of what the cloud kept.")

    @Option(help: "The file `setup` wrote.") var setup: String
    @Option(help: "The database the nodes share (postgres://…), for the checks.") var database: String
    @Option(help: "A node's HTTP port (repeat, one per node).") var http: [Int]
    @Option(help: "A node's MQTT port (repeat, in the same order).") var mqtt: [Int]
    @Option(help: "A node's id (repeat, in the same order), for the report.") var nodeName: [String] = []
    @Option(help: "Devices (the first of the setup file; all by default).") var devices: Int?
    @Option(help: "Seconds of chaos.") var duration: Double = 180
    @Option(
        help: """
            Seed of the devices' draws (slow or not, faults and their moments, nodes, pauses) and of the apps' writes. \
            Not a replay: tasks interleave as they will, and user names and the reads' targets use the system generator.
            """)
    var seed: UInt64 = 1
    @Option(help: "The devices' keep-alive, seconds (30 to 1200).") var keepAlive: UInt16 = 30
    @Option(help: "Seconds between a device's posts.") var postInterval: Double = 15
    @Option(help: "Faults per device per minute of chaos.") var faultsPerMinute: Double = 0.5
    @Option(help: "Share of devices that answer property sets late.") var slowFraction: Double = 0.1
    @Option(help: "App writes per second.") var writeRate: Double = 20
    @Option(help: "Seconds allowed past 1.5 × keep-alive for the sweep's tick and the presence write.") var presenceGrace: Double = 2
    @Option(help: "A file written when the chaos starts (the script kills nodes from then on).") var ready: String?
    @Option(help: "The script's log of node events (`<unix ms> <kill|restart|died|restart-failed> <node>` lines), read at the end.")
    var events: String?

    func validate() throws {
        guard http.count == mqtt.count, !http.isEmpty else { throw ValidationError("give each node's --http and --mqtt port") }
        guard nodeName.isEmpty || nodeName.count == http.count else { throw ValidationError("give each node's --node-name, or none") }
        if let devices, devices < 1 { throw ValidationError("--devices must be at least 1") }
        // The cloud's range of keep-alives.
        guard (30...1200).contains(keepAlive) else { throw ValidationError("--keep-alive must be 30 to 1200 seconds") }
        for (name, value) in [("--duration", duration), ("--post-interval", postInterval), ("--write-rate", writeRate)]
        where !(value > 0 && value.isFinite) {
            throw ValidationError("\(name) must be a positive number")
        }
        guard faultsPerMinute >= 0, faultsPerMinute.isFinite else { throw ValidationError("--faults-per-minute must be 0 or more") }
        guard (0...1).contains(slowFraction) else { throw ValidationError("--slow-fraction must be 0 to 1") }
        guard presenceGrace >= 0, presenceGrace.isFinite else { throw ValidationError("--presence-grace must be 0 or more") }
    }

    func run() async throws {
        let document = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: setup))))
        var benches = try (document["devices"]?.arrayValue ?? []).map { try BenchDevice($0) }
        if let devices { benches = Array(benches.prefix(devices)) }
        guard !benches.isEmpty else { throw ValidationError("the setup file has no devices") }
        var logger = Logger(label: "soak")
        logger.logLevel = .critical
        let settings = SoakSettings(
            keepAlive: keepAlive, postInterval: postInterval, faultsPerMinute: faultsPerMinute, slowFraction: slowFraction, seed: seed,
            nodeNames: http.indices.map { $0 < nodeName.count ? nodeName[$0] : "node \($0)" })
        let records = SoakRecords()
        let phase = SoakPhase()
        let fleet = benches.enumerated().map { index, bench in
            SoakDevice(index: index, bench: bench, ports: mqtt, settings: settings, phase: phase, records: records, logger: logger)
        }
        let database = try await DatabaseURL(self.database).openWithoutMigrating(logger: logger, maximumConnections: 4)
        let apps = try await SoakApps.register(
            appID: document["appId"]?.stringValue ?? "", devices: benches, count: max(1, benches.count / 200), http: http, records: records)
        let watch = SoakPresenceWatch(database: database, devices: fleet, keepAlive: keepAlive, graceMs: Int64(presenceGrace * 1000))
        let timeline = Locked<[String: Double]>([:])
        let timeouts = Locked<[String]>([])
        let started = ContinuousClock.now
        let mark: @Sendable (String) -> Void = { name in timeline.withLock { $0[name] = Run.seconds(since: started) } }
        // A phase that runs out of time goes on (the checks still say what they can), and fails the run.
        let timedOut: @Sendable (String) -> Void = { what in timeouts.withLock { $0.append(what) } }

        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { running in
                    for (index, device) in fleet.enumerated() {
                        // Connect in waves, not all in one burst.
                        if index % 100 == 99 { try? await Task.sleep(for: .milliseconds(100)) }
                        running.addTask { await device.run() }
                    }
                }
            }
            let connected = await Self.waitUntil(limit: .seconds(120)) { fleet.filter(\.isUp).count >= fleet.count * 99 / 100 }
            if !connected { timedOut("fewer than 99 % of the devices connected within 120 s") }
            mark("connected")
            group.addTask { await watch.run(every: .seconds(5)) }
            phase.setChaos(true)
            if let ready { _ = FileManager.default.createFile(atPath: ready, contents: Data("\(SoakSettings.nowMs())\n".utf8)) }
            let chaosStart = ContinuousClock.now
            await apps.run(devices: benches, rate: writeRate, until: chaosStart + .seconds(duration), seed: seed)
            try? await Task.sleep(until: chaosStart + .seconds(duration), clock: .continuous)
            phase.setChaos(false)
            mark("chaosEnded")
            // Queued writes live 30 s and unanswered ones expire 30 s after they were sent: by
            // then every entry has left accepted, queued and sent. `acknowledged` may stay (it
            // becomes applied only when a report shows the values), which the checks allow.
            let settleEnd = ContinuousClock.now + .seconds(65)
            let settled = await Self.waitUntil(limit: .seconds(150)) { ContinuousClock.now >= settleEnd && fleet.allSatisfy(\.isUp) }
            if !settled { timedOut("not every device was back within 150 s of the chaos's end") }
            mark("settled")
            phase.stop()
            let gone = await Self.waitUntil(limit: .seconds(60)) { fleet.allSatisfy { $0.presence.live == 0 } }
            if !gone { timedOut("not every device's connections had closed within 60 s of the stop") }
            mark("devicesGone")
            try? await Task.sleep(for: .milliseconds(Int64(keepAlive) * 1500) + .seconds(presenceGrace + 3))
            await watch.sample()
            mark("lastPresenceSample")
            group.cancelAll()
        }

        let state = records.snapshot
        let checks = SoakChecks(database: database, nodeNames: settings.nodeNames)
        let posts = try await checks.posts(state)
        let writes = try await checks.writes(state)
        let presence = watch.snapshot
        await database.close()
        let report = SoakReport(
            devices: fleet.count, nodes: http.count, settings: settings, timeline: timeline.withLock { $0 }, events: Self.readEvents(events),
            slowDevices: fleet.filter(\.slow).count, records: state, posts: posts, writes: writes, presence: presence, limitMs: watch.limitMs,
            expectedSamples: Int(duration / 5), timeouts: timeouts.withLock { $0 })
        print(report.json.serialized(pretty: true))
        print(report.verdict)
        if report.violations > 0 { throw ExitCode(1) }
    }

    /// Polls `condition` every half second for at most `limit`; whether it came true.
    static func waitUntil(limit: Duration, _ condition: @Sendable () -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return true
    }

    static func readEvents(_ path: String?) -> [String] {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }
}

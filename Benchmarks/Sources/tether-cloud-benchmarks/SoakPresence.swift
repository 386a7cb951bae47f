import TetherCloud
import TetherCore

/// Samples presence as the cloud shows it (`devices.is_online`) and holds it against each
/// device's own account: a device shown online when the cloud has not heard from it for more
/// than 1.5 × its keep-alive (plus `grace`, for the sweep's tick and the presence write) is a
/// violation.
final class SoakPresenceWatch: Sendable {
    struct Violation: Sendable {
        var did: String
        var device: Int
        /// How long the device had been silent when a sample showed it online.
        var silentMs: Int64
        var sampledMs: Int64
        /// The row: which node holds it, and when the connection it describes started.
        var onlineNode: String
        var connectionStartedMs: Int64
        var story: String
    }

    struct State: Sendable {
        var samples = 0
        /// Samples whose query failed: each a look not taken, so a violation of the soak.
        var failedSamples = 0
        /// The worst sighting of each device that broke the rule.
        var violations: [String: Violation] = [:]
        /// Devices connected for more than 10 s that a sample showed offline (not a rule of the
        /// soak, reported as seen): the first sighting of each.
        var offlineWhileConnected: [String: String] = [:]
    }

    let database: any SQLDatabase
    let devices: [String: SoakDevice]
    let limitMs: Int64
    private let state = Locked(State())

    init(database: any SQLDatabase, devices: [SoakDevice], keepAlive: UInt16, graceMs: Int64) {
        self.database = database
        self.devices = Dictionary(uniqueKeysWithValues: devices.map { ($0.did, $0) })
        limitMs = Int64(keepAlive) * 1500 + graceMs
    }

    var snapshot: State { state.withLock { $0 } }

    /// Samples every `interval` until cancelled.
    func run(every interval: Duration) async {
        while !Task.isCancelled {
            await sample()
            try? await Task.sleep(for: interval)
        }
    }

    /// One look at every device. A row may be read at any moment of the query, so it is judged
    /// against the query's start and the devices' accounts read after it: a device that was
    /// silent since before the start minus the limit was silent throughout.
    func sample() async {
        let started = SoakSettings.nowMs()
        let rows: [SQLRow]
        do {
            rows = try await database.query("SELECT did, is_online, online_node, connection_started_ms FROM devices")
        } catch {
            state.withLock { $0.failedSamples += 1 }
            return
        }
        var seen: [Violation] = []
        var offline: [(did: String, what: String)] = []
        for row in rows {
            guard let did = row.optionalText("did"), let device = devices[did] else { continue }
            let online = row.optionalInt("is_online") == 1
            let truth = device.presence
            if online, truth.live == 0, started - truth.lastContactMs > limitMs {
                seen.append(
                    Violation(
                        did: did, device: device.index, silentMs: started - truth.lastContactMs, sampledMs: started,
                        onlineNode: row.optionalText("online_node") ?? "", connectionStartedMs: row.optionalInt("connection_started_ms") ?? 0,
                        story: "\(truth.story); last fault: \(truth.lastFault)"))
            } else if !online, truth.up, started - truth.upSinceMs > 10_000 {
                // An offline row keeps the start of the last connection it described; the sweep of
                // a dead node leaves it held by no node.
                let lastStarted = row.optionalInt("connection_started_ms").map { "\(started - $0) ms before" } ?? "unknown"
                let holder = row.optionalText("online_node").map { "last held by \($0)" } ?? "held by no node (swept)"
                offline.append(
                    (
                        did,
                        "device \(device.index) connected for \(started - truth.upSinceMs) ms (\(truth.story)); row offline, its connection "
                            + "started \(lastStarted), \(holder)"
                    )
                )
            }
        }
        state.withLock { state in
            state.samples += 1
            for violation in seen where (state.violations[violation.did]?.silentMs ?? -1) < violation.silentMs {
                state.violations[violation.did] = violation
            }
            for (did, what) in offline where state.offlineWhileConnected[did] == nil { state.offlineWhileConnected[did] = what }
        }
    }
}

import Logging
import TetherCore

/// Every second: this node's heartbeat, the ledger's expired commands, and the devices of
/// nodes that stopped without saying so.
struct NodeHousekeeping: Sendable {
    let nodeID: String
    let database: any SQLDatabase
    let ledger: CommandLedger
    let history: DeviceHistory
    let bus: any ClusterBus
    let answerTimeoutMs: Int64
    let nodeTimeoutMs: Int64
    let rules: RuleEngine?
    /// After a heartbeat late enough for the others to have thought this node dead: takes back
    /// the devices they swept offline while still connected here.
    let reclaim: @Sendable () async throws -> Void
    let logger: Logger

    /// Writes the heartbeat; the time written.
    @discardableResult
    func heartbeat() async throws -> Int64 {
        let now = Clock.unixMilliseconds()
        try await NodeStore(database).heartbeat(nodeID, atMs: now)
        return now
    }

    /// Until cancelled. The heartbeat has a loop of its own: a long sweep (a dead node's
    /// thousands of devices) or a slow query must not make this node look dead in turn.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var lastWrittenMs = Clock.unixMilliseconds()
                while !Task.isCancelled {
                    do {
                        let written = try await heartbeat()
                        // The others saw `lastWrittenMs` until now: long enough, and they may
                        // have swept this node's devices. (Half the timeout: clocks differ.)
                        if Self.mayHaveLookedDead(lastWrittenMs: lastWrittenMs, nowMs: Clock.unixMilliseconds(), nodeTimeoutMs: nodeTimeoutMs) {
                            try await reclaim()
                        }
                        lastWrittenMs = written
                    } catch {
                        guard !Task.isCancelled else { return }
                        logger.warning("the node's heartbeat could not be written", metadata: ["error": "\(error)"])
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            group.addTask { await chores() }
            await group.waitForAll()
        }
    }

    private func chores() async {
        var tick = 0
        while !Task.isCancelled {
            do {
                let now = Clock.unixMilliseconds()
                for expired in try await ledger.expire(now: now, answerTimeoutMs: answerTimeoutMs) {
                    await bus.publish(.command(expired.update))
                }
                if tick % 5 == 0 {
                    try await sweepDeadNodes(now: now)
                    try await endExpiredBindings()
                }
            } catch {
                // Shutting down: the query was cancelled, nothing failed.
                guard !Task.isCancelled else { return }
                logger.warning("gateway housekeeping failed", metadata: ["error": "\(error)"])
            }
            tick += 1
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Whether the others, seeing a heartbeat written at `lastWrittenMs` until `nowMs`, may
    /// have declared this node dead.
    static func mayHaveLookedDead(lastWrittenMs: Int64, nowMs: Int64, nodeTimeoutMs: Int64) -> Bool {
        nowMs - lastWrittenMs > nodeTimeoutMs / 2
    }

    /// The devices of nodes that stopped heartbeating are offline: their rows and history in
    /// a few statements, their events in one publication.
    private func sweepDeadNodes(now: Int64) async throws {
        let aliveSinceMs = now - nodeTimeoutMs
        // The rows and their history together: a reader never sees one without the other.
        let dids = try await database.transaction { transaction in
            let dids = try await DeviceStore(transaction).markOfflineOnDeadNodes(aliveSinceMs: aliveSinceMs)
            try await DeviceHistory.log(dids.map { DeviceHistory.Entry(did: $0, kind: .offline, atMs: now, body: ["reason": "node gone"]) }, on: transaction)
            return dids
        }
        guard !dids.isEmpty else { return }
        logger.warning("devices of nodes that stopped heartbeating are offline", metadata: ["count": "\(dids.count)"])
        await bus.publish(dids.map { .presence(did: $0, online: false, node: nil, atMs: now) })
        for did in dids { await rules?.record(did: did, .offline, body: ["at": .int(now)]) }
    }

    /// Guests whose invitation limited their time lose the device when it is up.
    private func endExpiredBindings() async throws {
        let sharing = SharingService(database: database, bus: bus)
        for ended in try await SharingStore(database).endExpiredBindings(now: Clock.unixNow()) {
            try await sharing.ended(guest: ended.uid, did: ended.did)
        }
    }

    /// The node stops: the others no longer wait for its heartbeat.
    func leave() async throws {
        try await NodeStore(database).remove(nodeID)
    }
}

import Logging
import ServiceLifecycle
import TetherCloudProtocol
import TetherCore

/// Takes the due steps of automation runs (scenes run by an app, groups and scenes run by a
/// schedule), on every node.
///
/// A run's lanes are rows: each locked while its due steps are taken (on PostgreSQL
/// `FOR UPDATE OF … SKIP LOCKED`, so nodes take different lanes), the ledger entries and the
/// steps' outcomes written and the lane advanced in the same transaction. A node that dies
/// mid-batch rolls it back, and the next node to look takes the same steps: each is taken once.
/// A delay is the lane's next due time, so it outlives a restart; the clock is injectable.
///
/// A scene goes on after a step that failed (an offline lamp does not keep the others dark),
/// and its run ends `failed`; a lane with `stop_on_failure` ends at its first failure.
struct AutomationRunner: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let control: AutomationControl
    let clock: any WallClock
    let configuration: SchedulerConfiguration
    let logger: Logger

    /// A user's runs under way at once.
    static let maximumRunning: Int64 = 100

    /// Starts a run, on the caller's transaction: its lanes due now. Nil when the user has too
    /// many runs under way.
    static func start(
        uid: String, appID: String, sceneID: String?, source: CommandSource, lanes: [[SceneTaskBody]], stopOnFailure: Bool, nowMs: Int64,
        on transaction: any SQLExecutor
    ) async throws -> String? {
        let store = AutomationRunStore(transaction)
        try await UserStore(transaction).lockForCounting(uid: uid)
        guard try await store.runningCount(uid: uid) < maximumRunning else { return nil }
        let id = "ru_" + Secrets.hex(bytes: 10)
        try await store.insert(
            .init(id: id, uid: uid, appID: appID, sceneID: sceneID, source: source, startedMs: nowMs, state: .running), lanes: lanes,
            stopOnFailure: stopOnFailure)
        return id
    }

    /// Takes every step due at the clock's time, batch after batch; `runID` limits it to one run.
    /// The number of lanes advanced.
    @discardableResult
    func advanceDue(runID: String? = nil) async throws -> Int {
        let now = clock.nowMs()
        var total = 0
        while true {
            let count = try await batch(nowMs: now, runID: runID)
            total += count
            if count < configuration.batchSize { return total }
        }
    }

    private func batch(nowMs now: Int64, runID: String?) async throws -> Int {
        let limit = configuration.batchSize
        // Nothing due, the usual case: no transaction, no connection held.
        if runID == nil, try await !AutomationRunStore(database).anyDue(nowMs: now) { return 0 }
        let (count, commands) = try await database.transaction { transaction in
            let store = AutomationRunStore(transaction)
            let due = try await store.lockDue(nowMs: now, limit: limit, runID: runID)
            if due.isEmpty { return (0, [CommandRecord]()) }
            var commands: [CommandRecord] = []
            var runs = Set<String>()
            for entry in due {
                switch entry {
                case .unreadable(let runID, let lane):
                    try await store.record(
                        runID: runID,
                        .init(lane: Int(lane), step: 0, did: "", at: now, errorCode: CloudError.serverError.code, message: "the run's steps cannot be read"))
                    try await store.save(runID: runID, lane: lane, nextStep: 0, resumeMs: nil, failed: true)
                    runs.insert(runID)
                case .lane(let lane):
                    runs.insert(lane.run.id)
                    // One lane's failure is its own: rolled back to here, recorded, ended.
                    try await transaction.query("SAVEPOINT automation_lane")
                    // What a rolled-back lane sent is not delivered.
                    let sent = commands
                    do {
                        try await advance(lane, nowMs: now, store: store, on: transaction, commands: &commands)
                        try await transaction.query("RELEASE SAVEPOINT automation_lane")
                    } catch {
                        try await transaction.query("ROLLBACK TO SAVEPOINT automation_lane")
                        commands = sent
                        logger.warning("an automation's step could not be taken", metadata: ["run": "\(lane.run.id)", "error": "\(error)"])
                        try await store.record(
                            runID: lane.run.id,
                            .init(
                                lane: Int(lane.lane), step: Int(lane.nextStep), did: "", at: now, errorCode: CloudError.serverError.code,
                                message: "the step could not be taken"))
                        try await store.save(runID: lane.run.id, lane: lane.lane, nextStep: lane.nextStep, resumeMs: nil, failed: true)
                    }
                }
            }
            for id in runs.sorted() { try await store.finishIfDone(runID: id, nowMs: now) }
            return (due.count, commands)
        }
        for command in commands {
            await bus.publish(.command(command.update))
            await bus.publish(.deliver(commandID: command.id, did: command.did))
        }
        return count
    }

    /// Takes a lane's steps up to its next delay (or its end).
    private func advance(
        _ lane: AutomationRunStore.Lane, nowMs now: Int64, store: AutomationRunStore, on transaction: any SQLExecutor, commands: inout [CommandRecord]
    ) async throws {
        var step = lane.nextStep
        var failed = lane.failed
        while step < lane.steps.count {
            let index = Int(step)
            var outcomes: [(did: String, AutomationControl.Outcome)] = []
            switch lane.steps[index].task {
            case .delay(let seconds):
                try await store.save(runID: lane.run.id, lane: lane.lane, nextStep: step + 1, resumeMs: now + seconds * 1000, failed: failed)
                return
            case .device(let did, let command):
                outcomes.append((did, try await send(lane.run, did: did, command, on: transaction)))
            case .group(let id, let command):
                let groups = GroupStore(transaction)
                if try await groups.find(id: id, uid: lane.run.uid) == nil {
                    outcomes.append(("", .refused(CloudAPIError.groupNotFound(detail: "the group \(id) is gone"))))
                } else {
                    for member in try await groups.members(groupID: id) {
                        outcomes.append((member.did, try await send(lane.run, did: member.did, command, on: transaction)))
                    }
                }
            }
            for (did, outcome) in outcomes {
                var result = AutomationStepBody(lane: Int(lane.lane), step: index, did: did, at: now)
                switch outcome {
                case .sent(let record):
                    commands.append(record)
                    result.commandID = record.id
                case .refused(let error):
                    failed = true
                    result.errorCode = error.code
                    result.message = error.detail.isEmpty ? error.message : error.detail
                }
                try await store.record(runID: lane.run.id, result)
            }
            step += 1
            if failed && lane.stopOnFailure { break }
        }
        try await store.save(runID: lane.run.id, lane: lane.lane, nextStep: step, resumeMs: nil, failed: failed)
    }

    private func send(
        _ run: AutomationRunStore.Run, did: String, _ command: SceneCommand, on transaction: any SQLExecutor
    ) async throws
        -> AutomationControl.Outcome
    {
        try await control.send(uid: run.uid, appID: run.appID, did: did, .scene(command), queueMs: 0, source: run.source, on: transaction)
    }
}

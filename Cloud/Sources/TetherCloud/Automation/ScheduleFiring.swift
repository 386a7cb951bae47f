import Logging
import ServiceLifecycle
import TetherCloudProtocol
import TetherCore

/// Fires schedules that are due, on every node: each run goes through the control path (the
/// model's check, the command ledger with `source` = scheduler, delivery by the node holding
/// the device) and is logged once.
///
/// Exactly once: a batch of due schedules is locked, fired and advanced to its next run in one
/// transaction, the ledger entry and the run's log row with it. On PostgreSQL the rows are taken
/// `FOR UPDATE SKIP LOCKED`, so nodes firing at once take different schedules; a node that dies
/// mid-batch rolls the whole batch back, and the next node to look fires it. The run log's
/// (schedule, planned instant) key refuses a second firing of the same run whatever happens.
/// Delivery is asked for after the commit; a node that dies between the two leaves the command
/// `accepted` in the ledger, sent when the device next connects or expired with that state.
///
/// After downtime, a run missed by no more than the grace period fires once; older runs are
/// logged `missed`, and the schedule goes on from its next run.
struct ScheduleFiring: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let catalogue: DeviceCatalogue
    let control: AutomationControl
    let clock: any WallClock
    let configuration: SchedulerConfiguration
    let logger: Logger

    struct Report: Sendable, Equatable {
        var fired = 0
        var refused = 0
        var missed = 0
    }

    /// Fires every run due at the clock's time, batch after batch.
    @discardableResult
    func fireDue() async throws -> Report {
        let now = clock.nowMs()
        var report = Report()
        while true {
            let (batch, count) = try await fireBatch(nowMs: now)
            report.fired += batch.fired
            report.refused += batch.refused
            report.missed += batch.missed
            if count < configuration.batchSize { return report }
        }
    }

    struct Batch: Sendable {
        var report = Report()
        var commands: [CommandRecord] = []
    }

    private func fireBatch(nowMs now: Int64) async throws -> (Report, Int) {
        let limit = configuration.batchSize
        let keys = try await ScheduleStore(database).dueProductKeys(nowMs: now, limit: limit)
        // Nothing due, the usual case: no transaction, no connection held.
        if keys.isEmpty { return (Report(), 0) }
        let graceMs = min(max(configuration.graceSeconds, 0), 3600) * 1000
        let (batch, count) = try await database.transaction { transaction in
            let store = ScheduleStore(transaction)
            let due = try await store.lockDue(nowMs: now, limit: limit)
            var batch = Batch()
            var together: [ScheduleStore.Record] = []
            var oneByOne: [ScheduleStore.Record] = []
            for entry in due {
                switch entry {
                case .unreadable(let id, let nextRunMs, let reason):
                    // Logged and set aside, so that it does not hold the others up.
                    try await store.logRun(scheduleID: id, plannedMs: nextRunMs, firedMs: now, .refused(code: CloudError.serverError.code, message: reason))
                    try await store.advance(id: id, nextRunMs: nil)
                    batch.report.refused += 1
                case .schedule(let schedule):
                    if case .device = schedule.fields.target { together.append(schedule) } else { oneByOne.append(schedule) }
                }
            }
            // Devices' runs together, a few statements for the batch; should that fail, one by one.
            if !together.isEmpty {
                try await transaction.query("SAVEPOINT schedule_batch")
                let before = batch
                do {
                    try await fireTogether(together, nowMs: now, graceMs: graceMs, store: store, on: transaction, into: &batch)
                    try await transaction.query("RELEASE SAVEPOINT schedule_batch")
                } catch {
                    try await transaction.query("ROLLBACK TO SAVEPOINT schedule_batch")
                    batch = before
                    logger.warning("schedules could not be fired together; one by one", metadata: ["count": "\(together.count)", "error": "\(error)"])
                    oneByOne = together + oneByOne
                }
            }
            for schedule in oneByOne {
                // One schedule's failure is its own: rolled back to here, logged, passed over.
                try await transaction.query("SAVEPOINT schedule_run")
                // What a rolled-back schedule sent and counted is not delivered nor reported.
                let before = batch
                do {
                    try await runs(of: schedule, nowMs: now, graceMs: graceMs, store: store, on: transaction, into: &batch)
                    try await transaction.query("RELEASE SAVEPOINT schedule_run")
                } catch {
                    try await transaction.query("ROLLBACK TO SAVEPOINT schedule_run")
                    batch = before
                    logger.warning("a schedule could not be fired", metadata: ["schedule": "\(schedule.id)", "error": "\(error)"])
                    let planned = schedule.nextRunMs ?? now
                    try await store.logRun(
                        scheduleID: schedule.id, plannedMs: planned, firedMs: now,
                        .refused(code: CloudError.serverError.code, message: "the run could not be fired"))
                    try await store.advance(id: schedule.id, nextRunMs: schedule.fields.recurrence.nextRun(after: planned / 1000).map { $0 * 1000 })
                    batch.report.refused += 1
                }
            }
            return (batch, due.count)
        }
        if !batch.commands.isEmpty {
            await bus.publish(batch.commands.flatMap { [.command($0.update), .deliver(commandID: $0.id, did: $0.did)] })
        }
        if count > 0 {
            logger.debug(
                "schedules fired", metadata: ["fired": "\(batch.report.fired)", "refused": "\(batch.report.refused)", "missed": "\(batch.report.missed)"])
        }
        return (batch.report, count)
    }

    /// Every run of `schedule` due by `now`: each claimed in the log first (a run logged already
    /// is not fired again), then fired or logged missed; the schedule then waits for its next run.
    private func runs(
        of schedule: ScheduleStore.Record, nowMs now: Int64, graceMs: Int64, store: ScheduleStore,
        on transaction: any SQLExecutor, into batch: inout Batch
    ) async throws {
        var planned = schedule.nextRunMs
        // A schedule repeats at most daily: a bound keeps a broken clock from spinning.
        var steps = 0
        while let at = planned, at <= now, steps < 1_000 {
            steps += 1
            if now - at > graceMs {
                try await store.logRun(scheduleID: schedule.id, plannedMs: at, firedMs: now, .missed)
                batch.report.missed += 1
            } else if let run = try await store.claimRun(scheduleID: schedule.id, plannedMs: at, firedMs: clock.nowMs()) {
                // Late (the cloud was starting): an offline device may yet come back within the grace period.
                let lateQueueMs = now - at > 5_000 ? at + graceMs - now : 0
                switch try await fire(schedule, nowMs: now, lateQueueMs: lateQueueMs, on: transaction) {
                case .sent(let command):
                    batch.commands.append(command)
                    batch.report.fired += 1
                    try await store.settleRun(run, .fired(commandID: command.id))
                case .started(let runID):
                    batch.report.fired += 1
                    try await store.settleRun(run, .started(runID: runID))
                case .refused(let error):
                    batch.report.refused += 1
                    try await store.settleRun(run, .refused(code: error.code, message: error.detail.isEmpty ? error.message : error.detail))
                }
            }
            planned = schedule.fields.recurrence.nextRun(after: at / 1000).map { $0 * 1000 }
        }
        try await store.advance(id: schedule.id, nextRunMs: planned)
    }

    private enum Outcome {
        case sent(CommandRecord)
        /// A group's or a scene's run, whose steps `AutomationRunner` takes.
        case started(runID: String)
        case refused(CloudAPIError)
    }

    /// One run, on the firing's transaction. A device's: the checks of an app's write (and its
    /// user's account), then the ledger entry; a run that fires late may wait `lateQueueMs` for
    /// an offline device, as one with `queue_ttl` waits that long. A group's or a scene's: a
    /// run of its steps, each checked when taken.
    private func fire(_ schedule: ScheduleStore.Record, nowMs now: Int64, lateQueueMs: Int64, on transaction: any SQLExecutor) async throws -> Outcome {
        let lanes: [[SceneTaskBody]]
        var sceneID: String?
        switch schedule.fields.target {
        case .device(let did):
            guard let command = schedule.fields.command else { return .refused(CloudAPIError.formInvalid(detail: "the schedule has no command")) }
            let queueMs = schedule.fields.queueSeconds > 0 ? schedule.fields.queueSeconds * 1000 : lateQueueMs
            switch try await control.send(
                uid: schedule.uid, appID: schedule.appID, did: did, .control(ScheduleService.request(command)), queueMs: queueMs, source: .scheduler,
                on: transaction)
            {
            case .sent(let record): return .sent(record)
            case .refused(let error) where error.code == CloudError.deviceOffline.code:
                return .refused(CloudAPIError.deviceOffline(detail: "device \(did) was offline; set queue_ttl to have runs wait for it"))
            case .refused(let error): return .refused(error)
            }
        case .group(let id):
            guard let command = schedule.fields.command else { return .refused(CloudAPIError.formInvalid(detail: "the schedule has no command")) }
            guard let group = try await GroupStore(transaction).find(id: id, uid: schedule.uid) else {
                return .refused(CloudAPIError.groupNotFound(detail: "the group \(id) is gone"))
            }
            let model = try? await catalogue.model(group.productKey, on: transaction)
            lanes = [[SceneTaskBody(.group(id: id, AutomationControl.sceneCommand(command, model: model)))]]
        case .scene(let id):
            guard let scene = try await SceneStore(transaction).find(id: id, uid: schedule.uid) else {
                return .refused(CloudAPIError.sceneNotFound(detail: "the scene \(id) is gone"))
            }
            lanes = [scene.tasks]
            sceneID = id
        }
        guard try await !UserStore(transaction).isDisabled(uid: schedule.uid) else {
            return .refused(CloudAPIError.userInvalid(detail: "the schedule's user is disabled"))
        }
        guard
            let runID = try await AutomationRunner.start(
                uid: schedule.uid, appID: schedule.appID, sceneID: sceneID, source: .scheduler, lanes: lanes, stopOnFailure: false, nowMs: now,
                on: transaction)
        else { return .refused(CloudAPIError.formInvalid(detail: "too many of the user's automations are running")) }
        return .started(runID: runID)
    }
}

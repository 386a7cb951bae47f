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
struct ScheduleFiring: Service {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let catalogue: DeviceCatalogue
    let clock: any WallClock
    let configuration: SchedulerConfiguration
    let logger: Logger

    struct Report: Sendable, Equatable {
        var fired = 0
        var refused = 0
        var missed = 0
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var lastPrune: Int64 = 0
            while !Task.isCancelled {
                do {
                    _ = try await fireDue()
                    let now = clock.nowMs()
                    if now - lastPrune > 3_600_000 {
                        try await ScheduleStore(database).pruneRuns(beforeMs: now - configuration.runLogDays * 86_400_000)
                        lastPrune = now
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("firing schedules failed", metadata: ["error": "\(error)"]) }
                }
                try? await Task.sleep(for: configuration.interval)
            }
        }
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

    private struct Batch: Sendable {
        var report = Report()
        var commands: [CommandRecord] = []
        var missingModels: Set<String> = []
    }

    private func fireBatch(nowMs now: Int64) async throws -> (Report, Int) {
        let limit = configuration.batchSize
        let keys = try await ScheduleStore(database).dueProductKeys(nowMs: now, limit: limit)
        // Nothing due, the usual case: no transaction, no connection held.
        if keys.isEmpty { return (Report(), 0) }
        // Models are read first: the transaction must not wait on another connection (SQLite
        // has one, and it holds it). A row locked below whose model is not here (another node
        // took the rows these keys came from) waits for the next look, unfired.
        var models: [String: ThingModel] = [:]
        for key in keys where !key.isEmpty {
            if let model = try? await catalogue.model(key) { models[key] = model }
        }
        let graceMs = min(max(configuration.graceSeconds, 0), 3600) * 1000
        let (batch, count) = try await database.transaction { [models] transaction in
            let store = ScheduleStore(transaction)
            let due = try await store.lockDue(nowMs: now, limit: limit)
            var batch = Batch()
            for entry in due {
                switch entry {
                case .unreadable(let id, let nextRunMs, let reason):
                    // Logged and set aside, so that it does not hold the others up.
                    try await store.logRun(scheduleID: id, plannedMs: nextRunMs, firedMs: now, .refused(code: CloudError.serverError.code, message: reason))
                    try await store.advance(id: id, nextRunMs: nil)
                    batch.report.refused += 1
                case .schedule(let schedule):
                    if schedule.fields.target.did != nil, models[schedule.productKey] == nil, let next = schedule.nextRunMs, now - next <= graceMs {
                        batch.missingModels.insert(schedule.productKey)
                        continue
                    }
                    // One schedule's failure is its own: rolled back to here, logged, passed over.
                    try await transaction.query("SAVEPOINT schedule_run")
                    do {
                        try await runs(of: schedule, nowMs: now, graceMs: graceMs, models: models, store: store, on: transaction, into: &batch)
                        try await transaction.query("RELEASE SAVEPOINT schedule_run")
                    } catch {
                        try await transaction.query("ROLLBACK TO SAVEPOINT schedule_run")
                        logger.warning("a schedule could not be fired", metadata: ["schedule": "\(schedule.id)", "error": "\(error)"])
                        let planned = schedule.nextRunMs ?? now
                        try await store.logRun(
                            scheduleID: schedule.id, plannedMs: planned, firedMs: now,
                            .refused(code: CloudError.serverError.code, message: "the run could not be fired"))
                        try await store.advance(id: schedule.id, nextRunMs: schedule.fields.recurrence.nextRun(after: planned / 1000).map { $0 * 1000 })
                        batch.report.refused += 1
                    }
                }
            }
            return (batch, due.count)
        }
        for command in batch.commands {
            await bus.publish(.command(command.update))
            await bus.publish(.deliver(commandID: command.id, did: command.did))
        }
        for key in batch.missingModels where !key.isEmpty { _ = try? await catalogue.model(key) }
        if count > 0 {
            logger.debug(
                "schedules fired", metadata: ["fired": "\(batch.report.fired)", "refused": "\(batch.report.refused)", "missed": "\(batch.report.missed)"])
        }
        // Rows waiting for their model do not count as taken: the next look fires them.
        return (batch.report, batch.missingModels.isEmpty ? count : 0)
    }

    /// Every run of `schedule` due by `now`: each claimed in the log first (a run logged already
    /// is not fired again), then fired or logged missed; the schedule then waits for its next run.
    private func runs(
        of schedule: ScheduleStore.Record, nowMs now: Int64, graceMs: Int64, models: [String: ThingModel], store: ScheduleStore,
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
                switch try await fire(schedule, lateQueueMs: lateQueueMs, models: models, on: transaction) {
                case .fired(let command):
                    batch.commands.append(command)
                    batch.report.fired += 1
                    try await store.settleRun(run, .fired(commandID: command.id))
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
        case fired(CommandRecord)
        case refused(CloudAPIError)
    }

    /// One run of a device's schedule, on the firing's transaction: the checks of an app's
    /// write (and its user's account), then the ledger entry. A run that fires late may wait
    /// `lateQueueMs` for an offline device, as one with `queue_ttl` waits that long.
    private func fire(
        _ schedule: ScheduleStore.Record, lateQueueMs: Int64, models: [String: ThingModel], on transaction: any SQLExecutor
    ) async throws
        -> Outcome
    {
        guard case .device(let did) = schedule.fields.target, let command = schedule.fields.command else {
            return .refused(CloudAPIError.formInvalid(detail: "only a device's schedules run on this cloud"))
        }
        guard try await !UserStore(transaction).isDisabled(uid: schedule.uid) else {
            return .refused(CloudAPIError.userInvalid(detail: "the schedule's user is disabled"))
        }
        guard let device = try await BindingStore(transaction).device(boundBy: schedule.uid, did: did) else {
            return .refused(CloudAPIError.deviceNotBound())
        }
        guard !device.isDisabled else { return .refused(CloudAPIError.deviceDisabled()) }
        guard let model = models[device.productKey] else {
            return .refused(CloudAPIError.serverError(detail: "the product's model could not be read"))
        }
        let kind: CommandKind
        let body: JSONValue
        do {
            (kind, body) = try ControlService.command(ScheduleService.request(command), model: model)
        } catch let error as CloudAPIError {
            return .refused(error)
        }
        // The ledger's deadlines are on the system's clock, whatever the scheduler's reads.
        let queueMs = schedule.fields.queueSeconds > 0 ? schedule.fields.queueSeconds * 1000 : lateQueueMs
        guard device.isOnline || queueMs > 0 else {
            return .refused(CloudAPIError.deviceOffline(detail: "device \(did) was offline; set queue_ttl to have runs wait for it"))
        }
        let record = try await CommandLedger(database: database).insert(
            did: did, uid: schedule.uid, appID: schedule.appID, kind: kind, body: body, state: queueMs > 0 ? .queued : .accepted,
            queueUntilMs: queueMs > 0 ? Clock.unixMilliseconds() + queueMs : nil, source: .scheduler, on: transaction)
        return .fired(record)
    }
}

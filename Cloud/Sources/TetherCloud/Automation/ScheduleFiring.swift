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
    }

    private func fireBatch(nowMs now: Int64) async throws -> (Report, Int) {
        let limit = configuration.batchSize
        // Models are read first: the transaction must not wait on another connection (SQLite
        // has one, and it holds it).
        let keys = try await ScheduleStore(database).dueProductKeys(nowMs: now, limit: limit)
        // Nothing due, the usual case: no transaction, no connection held.
        if keys.isEmpty { return (Report(), 0) }
        var models: [String: ThingModel] = [:]
        for key in keys where !key.isEmpty {
            models[key] = try? await catalogue.model(key)
        }
        let graceMs = configuration.graceSeconds * 1000
        let (batch, count) = try await database.transaction { [models] transaction in
            let store = ScheduleStore(transaction)
            let due = try await store.lockDue(nowMs: now, limit: limit)
            var batch = Batch()
            for schedule in due {
                var planned = schedule.nextRunMs
                // A schedule repeats at most daily: a bound keeps a broken clock from spinning.
                var steps = 0
                while let at = planned, at <= now, steps < 1_000 {
                    steps += 1
                    if now - at > graceMs {
                        try await store.logRun(scheduleID: schedule.id, plannedMs: at, firedMs: now, .missed)
                        batch.report.missed += 1
                    } else {
                        let outcome = try await fire(schedule, nowMs: now, models: models, on: transaction)
                        switch outcome {
                        case .fired(let command):
                            batch.commands.append(command)
                            batch.report.fired += 1
                            try await store.logRun(scheduleID: schedule.id, plannedMs: at, firedMs: now, .fired(commandID: command.id))
                        case .refused(let error):
                            batch.report.refused += 1
                            try await store.logRun(
                                scheduleID: schedule.id, plannedMs: at, firedMs: now,
                                .refused(code: error.code, message: error.detail.isEmpty ? error.message : error.detail))
                        }
                    }
                    planned = schedule.fields.recurrence.nextRun(after: at / 1000).map { $0 * 1000 }
                }
                try await store.advance(id: schedule.id, nextRunMs: planned)
            }
            return (batch, due.count)
        }
        for command in batch.commands {
            await bus.publish(.command(command.update))
            await bus.publish(.deliver(commandID: command.id, did: command.did))
        }
        if count > 0 {
            logger.debug(
                "schedules fired", metadata: ["fired": "\(batch.report.fired)", "refused": "\(batch.report.refused)", "missed": "\(batch.report.missed)"])
        }
        return (batch.report, count)
    }

    private enum Outcome {
        case fired(CommandRecord)
        case refused(CloudAPIError)
    }

    /// One run of a device's schedule, on the firing's transaction: the checks of an app's
    /// write, then the ledger entry.
    private func fire(
        _ schedule: ScheduleStore.Record, nowMs: Int64, models: [String: ThingModel], on transaction: any SQLExecutor
    ) async throws
        -> Outcome
    {
        guard case .device(let did) = schedule.fields.target, let command = schedule.fields.command else {
            return .refused(CloudAPIError.formInvalid(detail: "only a device's schedules run on this cloud"))
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
        let queueSeconds = schedule.fields.queueSeconds
        guard device.isOnline || queueSeconds > 0 else {
            return .refused(CloudAPIError.deviceOffline(detail: "device \(did) was offline; set queue_ttl to have runs wait for it"))
        }
        let record = try await CommandLedger(database: database).insert(
            did: did, uid: schedule.uid, appID: schedule.appID, kind: kind, body: body, state: queueSeconds > 0 ? .queued : .accepted,
            queueUntilMs: queueSeconds > 0 ? Clock.unixMilliseconds() + queueSeconds * 1000 : nil, source: .scheduler, on: transaction)
        return .fired(record)
    }
}

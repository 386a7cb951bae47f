import TetherCloudProtocol
import TetherCore

extension ScheduleFiring {
    /// Fires devices' schedules as one: their runs worked out, missed ones logged, the others
    /// claimed in the log, checked (the user's account, the binding, the device, the model) from a
    /// few reads for the whole batch, their ledger entries inserted and their log rows settled,
    /// each a few many-row statements. The same outcomes as firing them one by one (`runs(of:)`).
    func fireTogether(
        _ schedules: [ScheduleStore.Record], nowMs now: Int64, graceMs: Int64, store: ScheduleStore, on transaction: any SQLExecutor,
        into batch: inout Batch
    ) async throws {
        struct Candidate {
            var schedule: ScheduleStore.Record
            var did: String
            var command: ScheduleCommand
            var key: ScheduleStore.RunKey
            var lateQueueMs: Int64
        }
        var candidates: [Candidate] = []
        var missed: [ScheduleStore.RunKey] = []
        var next: [(id: String, nextRunMs: Int64?)] = []
        for schedule in schedules {
            guard case .device(let did) = schedule.fields.target, let command = schedule.fields.command else { continue }
            var planned = schedule.nextRunMs
            // A schedule repeats at most daily: a bound keeps a broken clock from spinning.
            var steps = 0
            while let at = planned, at <= now, steps < 1_000 {
                steps += 1
                let key = ScheduleStore.RunKey(scheduleID: schedule.id, plannedMs: at)
                if now - at > graceMs {
                    missed.append(key)
                } else {
                    // Late (the cloud was starting): an offline device may yet come back within the grace period.
                    candidates.append(
                        Candidate(schedule: schedule, did: did, command: command, key: key, lateQueueMs: now - at > 5_000 ? at + graceMs - now : 0))
                }
                planned = schedule.fields.recurrence.nextRun(after: at / 1000).map { $0 * 1000 }
            }
            next.append((schedule.id, planned))
        }
        try await store.logMissed(missed)
        batch.report.missed += missed.count
        let claimed = try await store.claimRuns(candidates.map(\.key), firedMs: clock.nowMs())
        let runs = candidates.filter { claimed[$0.key] != nil }
        let disabled = try await UserStore(transaction).disabled(Set(runs.map(\.schedule.uid)))
        let devices = try await BindingStore(transaction).devices(boundBy: Set(runs.map { UserDevice(uid: $0.schedule.uid, did: $0.did) }))
        var inserts: [(runID: Int64, command: CommandLedger.NewCommand)] = []
        var refused: [(runID: Int64, code: Int, message: String)] = []
        for run in runs {
            let runID = claimed[run.key]!
            func refuse(_ error: CloudAPIError) { refused.append((runID, error.code, error.detail.isEmpty ? error.message : error.detail)) }
            guard !disabled.contains(run.schedule.uid) else {
                refuse(CloudAPIError.userInvalid(detail: "the automation's user is disabled"))
                continue
            }
            guard let device = devices[UserDevice(uid: run.schedule.uid, did: run.did)] else {
                refuse(CloudAPIError.deviceNotBound(detail: "the automation's user is not bound to \(run.did)"))
                continue
            }
            guard !device.isDisabled else {
                refuse(CloudAPIError.deviceDisabled())
                continue
            }
            guard let model = try? await catalogue.model(device.productKey, on: transaction) else {
                refuse(CloudAPIError.serverError(detail: "the product's model could not be read"))
                continue
            }
            let kind: CommandKind
            let body: JSONValue
            do {
                (kind, body) = try ControlService.command(ScheduleService.request(run.command), model: model)
            } catch let error as CloudAPIError {
                refuse(error)
                continue
            }
            let queueMs = run.schedule.fields.queueSeconds > 0 ? run.schedule.fields.queueSeconds * 1000 : run.lateQueueMs
            guard device.isOnline || queueMs > 0 else {
                refuse(CloudAPIError.deviceOffline(detail: "device \(run.did) was offline; set queue_ttl to have runs wait for it"))
                continue
            }
            // The ledger's deadlines are on the system's clock, whatever the scheduler's reads.
            inserts.append(
                (
                    runID,
                    CommandLedger.NewCommand(
                        did: run.did, uid: run.schedule.uid, appID: run.schedule.appID, kind: kind, body: body.serialized(),
                        state: queueMs > 0 ? .queued : .accepted, queueUntilMs: queueMs > 0 ? Clock.unixMilliseconds() + queueMs : nil, source: .scheduler)
                ))
        }
        let records = try await CommandLedger(database: database).insertMany(inserts.map(\.command), on: transaction)
        try await store.settleFired(zip(inserts, records).map { ($0.runID, $1.id) })
        try await store.settleRefused(refused)
        try await store.advance(next)
        batch.commands += records
        batch.report.fired += records.count
        batch.report.refused += refused.count
    }
}

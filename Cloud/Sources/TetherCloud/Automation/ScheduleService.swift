import TetherCloudProtocol
import TetherCore

/// The Open API's schedulers, per device (`/app/devices/{did}/scheduler`) and common
/// (`/app/common_scheduler`): one set of schedules, each owned by the user who made it and seen
/// by no one else. The per-device paths see the schedules of their device.
///
/// Who may schedule a device: whoever may control it (a user bound to it, owner or guest, the
/// device not disabled), checked when the schedule is written and again at every run. A
/// device's schedule lives as long as its owner's binding: unbinding, a revoked or expired
/// share, leaving the home the binding came from, all delete the user's schedules of that
/// device. The command is checked against the product's model when written (9025) and again
/// when it fires.
struct ScheduleService: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let catalogue: DeviceCatalogue
    let clock: any WallClock
    let configuration: SchedulerConfiguration
    let maximumQueueSeconds: Int64

    func create(_ user: AuthenticatedUser, _ fields: ScheduleFieldsBody) async throws -> ScheduleBody {
        let productKey = try await check(user, fields)
        let now = clock.nowMs()
        let record = ScheduleStore.Record(
            id: "sc_" + Secrets.hex(bytes: 10), uid: user.uid, appID: user.appID, productKey: productKey, fields: fields,
            nextRunMs: try Self.nextRun(fields, afterMs: now), createdAt: now / 1000, updatedAt: now / 1000)
        let limits = configuration
        try await database.transaction { transaction in
            let store = ScheduleStore(transaction)
            let counts = try await store.counts(uid: user.uid, did: fields.target.did)
            guard counts.all < limits.maximumPerUser else {
                throw CloudAPIError.formInvalid(detail: "a user has at most \(limits.maximumPerUser) schedules")
            }
            guard counts.device < limits.maximumPerDevice else {
                throw CloudAPIError.formInvalid(detail: "a device has at most \(limits.maximumPerDevice) of your schedules")
            }
            try await Self.recheck(fields.target, uid: user.uid, on: transaction)
            try await store.insert(record)
        }
        await bus.publish(.schedules(uid: user.uid, ScheduleChangeBody(id: record.id, change: .created, did: fields.target.did)))
        return record.body
    }

    /// Replaces a schedule's fields. `pathDid` is the per-device path's device: the schedule
    /// must be of that device.
    func update(_ user: AuthenticatedUser, id: String, pathDid: String?, _ fields: ScheduleFieldsBody) async throws -> ScheduleBody {
        _ = try await find(user, id: id, pathDid: pathDid)
        let productKey = try await check(user, fields)
        let now = clock.nowMs()
        let limits = configuration
        // Locked against a firing of the same schedule, and never back to a run already logged.
        let record = try await database.transaction { transaction in
            let store = ScheduleStore(transaction)
            guard var record = try await store.lock(id: id, uid: user.uid) else { throw CloudAPIError.schedulerNotFound(detail: "no schedule \(id) of yours") }
            if let did = fields.target.did, did != record.fields.target.did {
                guard try await store.counts(uid: user.uid, did: did).device < limits.maximumPerDevice else {
                    throw CloudAPIError.formInvalid(detail: "a device has at most \(limits.maximumPerDevice) of your schedules")
                }
            }
            try await Self.recheck(fields.target, uid: user.uid, on: transaction)
            let after = max(now, try await store.lastPlanned(scheduleID: id) ?? now)
            record.productKey = productKey
            record.fields = fields
            record.nextRunMs = try Self.nextRun(fields, afterMs: after)
            record.updatedAt = now / 1000
            guard try await store.update(record) else { throw CloudAPIError.schedulerNotFound(detail: "no schedule \(id) of yours") }
            return record
        }
        await bus.publish(.schedules(uid: user.uid, ScheduleChangeBody(id: id, change: .updated, did: fields.target.did)))
        return record.body
    }

    func delete(_ user: AuthenticatedUser, id: String, pathDid: String?) async throws {
        _ = try await find(user, id: id, pathDid: pathDid)
        guard let deleted = try await ScheduleStore(database).delete(id: id, uid: user.uid) else {
            throw CloudAPIError.schedulerNotFound(detail: "no schedule \(id) of yours")
        }
        await bus.publish(.schedules(uid: user.uid, ScheduleChangeBody(id: id, change: .deleted, did: deleted.fields.target.did)))
    }

    func schedule(_ user: AuthenticatedUser, id: String, pathDid: String?) async throws -> ScheduleBody {
        try await find(user, id: id, pathDid: pathDid).body
    }

    /// The user's schedules. On the per-device path (`device`), the user must be bound to the
    /// device (9017).
    func list(
        _ user: AuthenticatedUser, device: String? = nil, did: String? = nil, groupID: String? = nil, sceneID: String? = nil, limit: Int, skip: Int
    ) async throws -> [ScheduleBody] {
        if let device { _ = try await DeviceAccess(database: database).readable(by: user, did: device) }
        return try await ScheduleStore(database).list(uid: user.uid, did: device ?? did, groupID: groupID, sceneID: sceneID, limit: limit, skip: skip)
            .map(\.body)
    }

    func runs(_ user: AuthenticatedUser, id: String, pathDid: String?, limit: Int, skip: Int) async throws -> [ScheduleRunBody] {
        _ = try await find(user, id: id, pathDid: pathDid)
        return try await ScheduleStore(database).runs(scheduleID: id, limit: limit, skip: skip)
    }

    private func find(_ user: AuthenticatedUser, id: String, pathDid: String?) async throws -> ScheduleStore.Record {
        guard id.utf8.count <= 64, let record = try await ScheduleStore(database).find(id: id, uid: user.uid),
            pathDid == nil || record.fields.target.did == pathDid
        else {
            throw CloudAPIError.schedulerNotFound(detail: "no schedule \(id) of yours" + (pathDid.map { " for device \($0)" } ?? ""))
        }
        return record
    }

    /// Checks what a schedule acts on and what it sends; the device's product.
    private func check(_ user: AuthenticatedUser, _ fields: ScheduleFieldsBody) async throws -> String {
        guard (0...maximumQueueSeconds).contains(fields.queueSeconds) else {
            throw CloudAPIError.formInvalid(detail: "queue_ttl is 0 to \(maximumQueueSeconds) seconds")
        }
        switch fields.target {
        case .device(let did):
            let device = try await DeviceAccess(database: database).controllable(by: user, did: did)
            let model = try await catalogue.model(device.productKey)
            guard let command = fields.command else { throw CloudAPIError.formInvalid(detail: "attrs or raw is required") }
            _ = try ControlService.command(Self.request(command), model: model)
            return device.productKey
        case .group(let id):
            guard let group = try await GroupStore(database).find(id: id, uid: user.uid) else {
                throw CloudAPIError.groupNotFound(detail: "no group \(id) of yours")
            }
            guard group.isSingleProduct else { throw CloudAPIError.formInvalid(detail: "group \(id) is mixed: schedules write to single-product groups") }
            let model = try await catalogue.model(group.productKey)
            guard let command = fields.command else { throw CloudAPIError.formInvalid(detail: "attrs or raw is required") }
            _ = try ControlService.command(Self.request(command), model: model)
            return group.productKey
        case .scene(let id):
            guard try await SceneStore(database).find(id: id, uid: user.uid) != nil else {
                throw CloudAPIError.sceneNotFound(detail: "no scene \(id) of yours")
            }
            return ""
        }
    }

    /// The target is still there, on the transaction that writes the schedule: a device's binding
    /// (its foreign key would refuse the row), a group or a scene (deleted meanwhile, it would
    /// leave a schedule refused at every run).
    private static func recheck(_ target: ScheduleTarget, uid: String, on transaction: any SQLExecutor) async throws {
        switch target {
        case .device(let did):
            guard try await BindingStore(transaction).isBound(uid, did: did) else { throw CloudAPIError.deviceNotBound() }
        case .group(let id):
            guard try await GroupStore(transaction).find(id: id, uid: uid) != nil else { throw CloudAPIError.groupNotFound(detail: "no group \(id) of yours") }
        case .scene(let id):
            guard try await SceneStore(transaction).find(id: id, uid: uid) != nil else { throw CloudAPIError.sceneNotFound(detail: "no scene \(id) of yours") }
        }
    }

    static func request(_ command: ScheduleCommand) -> ControlService.Request {
        switch command {
        case .attrs(let attrs): return .attrs(attrs)
        case .raw(let bytes, _): return .raw(bytes)
        }
    }

    /// The first run after `afterMs` of an enabled schedule (nil for a disabled one, which may
    /// have no run left); an enabled schedule that would never run is refused.
    static func nextRun(_ fields: ScheduleFieldsBody, afterMs: Int64) throws -> Int64? {
        guard fields.enabled else { return nil }
        guard let next = fields.recurrence.nextRun(after: afterMs / 1000) else {
            throw CloudAPIError.formInvalid(detail: "the schedule never runs: \(never(fields.recurrence)) (in \(fields.recurrence.zone))")
        }
        return next * 1000
    }

    private static func never(_ recurrence: ScheduleRecurrence) -> String {
        switch recurrence.repetition {
        case .once(let date): return "\(date) \(recurrence.time) has passed or lies outside start_date…end_date"
        case .weekly, .monthly: return "no day between start_date and end_date is one of its days, or end_date has passed"
        }
    }
}

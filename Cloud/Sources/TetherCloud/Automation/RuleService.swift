import TetherCloudProtocol
import TetherCore

/// Linkage rules (reference §2.7): each a user's own and seen by no one else (404 for anyone
/// else's). Who may write one: a user bound to its trigger and input devices (owner or guest)
/// who may control each device its outputs write to; checked when written, and the outputs again
/// at every step (`AutomationRunner`). A rule goes with its user's binding to its trigger device.
struct RuleService: Sendable {
    let database: any SQLDatabase
    let catalogue: DeviceCatalogue
    let engine: RuleEngine
    let clock: any WallClock

    static let maximumRules = 100

    func create(_ user: AuthenticatedUser, _ fields: RuleFieldsBody) async throws -> RuleBody {
        let fields = try await check(user, fields)
        let now = clock.nowMs() / 1000
        let record = RuleStore.Record(id: "rl_" + Secrets.hex(bytes: 10), uid: user.uid, appID: user.appID, fields: fields, createdAt: now, updatedAt: now)
        try await database.transaction { transaction in
            let store = RuleStore(transaction)
            guard try await store.count(uid: user.uid) < Self.maximumRules else {
                throw CloudAPIError.formInvalid(detail: "a user has at most \(Self.maximumRules) rules")
            }
            // The binding may have gone since the check (its foreign key would refuse the row).
            guard try await BindingStore(transaction).isBound(user.uid, did: fields.did) else { throw CloudAPIError.deviceNotBound() }
            try await store.insert(record)
        }
        await engine.refreshWatched()
        return record.body
    }

    func update(_ user: AuthenticatedUser, id: String, _ fields: RuleFieldsBody) async throws -> RuleBody {
        _ = try await find(user, id: id)
        let fields = try await check(user, fields)
        let updated = try await database.transaction { transaction in
            guard try await BindingStore(transaction).isBound(user.uid, did: fields.did) else { throw CloudAPIError.deviceNotBound() }
            return try await RuleStore(transaction).update(id: id, uid: user.uid, fields, now: clock.nowMs() / 1000)
        }
        guard updated else { throw Self.notFound(id) }
        await engine.refreshWatched()
        return try await find(user, id: id).body
    }

    func delete(_ user: AuthenticatedUser, id: String) async throws {
        guard id.utf8.count <= 64, try await RuleStore(database).delete(id: id, uid: user.uid) else { throw Self.notFound(id) }
        await engine.refreshWatched()
    }

    func list(_ user: AuthenticatedUser, limit: Int, skip: Int) async throws -> [RuleBody] {
        try await RuleStore(database).list(uid: user.uid, limit: limit, skip: skip).map(\.body)
    }

    func rule(_ user: AuthenticatedUser, id: String) async throws -> RuleBody {
        try await find(user, id: id).body
    }

    /// The data points rules may use, per product: those asked for, or every product of the
    /// devices the user is bound to. Only those products: a model is not told to strangers.
    func params(_ user: AuthenticatedUser, productKeys: [String]) async throws -> [String: [RuleParamBody]] {
        let own = try await RuleStore(database).boundProducts(uid: user.uid)
        let keys = productKeys.isEmpty ? own : productKeys
        var params: [String: [RuleParamBody]] = [:]
        for key in keys {
            guard own.contains(key) else { throw CloudAPIError.productKeyInvalid(detail: "no product \(key) among your devices") }
            params[key] = try await catalogue.model(key).dataPoints.map { point in
                switch point.type {
                case .bool: RuleParamBody(name: point.name, displayName: point.displayName, type: "bool")
                case .number: RuleParamBody(name: point.name, displayName: point.displayName, type: "int")
                case .enumeration(let labels): RuleParamBody(name: point.name, displayName: point.displayName, type: "enum", labels: labels)
                case .text, .binary: RuleParamBody(name: point.name, displayName: point.displayName, type: "binary")
                }
            }
        }
        return params
    }

    private func find(_ user: AuthenticatedUser, id: String) async throws -> RuleStore.Record {
        guard id.utf8.count <= 64, let record = try await RuleStore(database).find(id: id, uid: user.uid) else { throw Self.notFound(id) }
        return record
    }

    private static func notFound(_ id: String) -> CloudAPIError { CloudAPIError.notFound(detail: "no rule \(id) of yours") }

    /// Checks what the rule reads and writes; the fields with binary values as byte arrays.
    private func check(_ user: AuthenticatedUser, _ fields: RuleFieldsBody) async throws -> RuleFieldsBody {
        var fields = fields
        let access = DeviceAccess(database: database)
        let trigger = try await access.readable(by: user, did: fields.did)
        guard trigger.productKey == fields.productKey else {
            throw CloudAPIError.formInvalid(detail: "device \(fields.did) is of product \(trigger.productKey), not \(fields.productKey)")
        }
        let model = try await catalogue.model(trigger.productKey)
        if let attr = fields.eventAttr {
            let kind: DataPoint.Kind = fields.event == .alert ? .alert : .fault
            let eventType: ThingEvent.EventType = fields.event == .alert ? .alert : .error
            let isPoint = model.dataPoint(named: attr.name)?.kind == kind
            let isEvent = model.events.contains { $0.identifier == attr.name && $0.type == eventType }
            guard isPoint || (isEvent && attr.occurs) else {
                throw CloudAPIError.attrInvalid(
                    detail: isEvent
                        ? "\(attr.name) is an event: it occurs, it does not recover (value \"1\")"
                        : "product \(model.productKey) has no \(fields.event.rawValue) named \(attr.name)")
            }
        }
        var models: [String: ThingModel] = [:]
        for input in fields.inputs {
            let device = try await access.readable(by: user, did: input.did)
            guard device.productKey == input.productKey else {
                throw CloudAPIError.formInvalid(detail: "input \(input.prefix): device \(input.did) is of product \(device.productKey)")
            }
            models[input.prefix] = try await catalogue.model(device.productKey)
        }
        for group in fields.conditions {
            for comparison in group {
                for operand in [comparison.left, comparison.right] {
                    guard case .reference(let prefix, let name) = operand else { continue }
                    guard models[prefix]?.dataPoint(named: name) != nil else {
                        throw CloudAPIError.attrInvalid(detail: "\(operand): the input \(prefix) has no data point \(name)")
                    }
                }
            }
        }
        for (groupIndex, group) in fields.outputs.enumerated() {
            for (stepIndex, step) in group.enumerated() {
                guard case .control(let did, let command) = step else { continue }
                let device = try await access.controllable(by: user, did: did)
                let model = try await catalogue.model(device.productKey)
                switch command {
                case .raw(let bytes):
                    _ = try ControlService.command(.raw(bytes), model: model)
                case .attrs(let attrs):
                    guard case .attrs(let normalized) = AutomationControl.sceneCommand(.attrs(attrs), model: model) else { continue }
                    _ = try ControlService.command(.attrs(normalized), model: model)
                    fields.outputs[groupIndex][stepIndex] = .control(did: did, .attrs(normalized))
                }
            }
        }
        return fields
    }
}

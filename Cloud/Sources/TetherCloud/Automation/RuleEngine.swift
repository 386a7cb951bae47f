import Logging
import ServiceLifecycle
import Synchronization
import TetherCloudProtocol
import TetherCore

/// Evaluates linkage rules on what devices do, once per event in a cluster.
///
/// The gateway writes each event of a device some rule watches (a report, an alert or error
/// event, a presence change) into the `rule_events` outbox, a report in the same transaction as
/// the report itself, and hands it here at once. An event is taken in one transaction that
/// locks it, evaluates the rules it may set off, starts their outputs as an automation run
/// (groups side by side, each stopping at its first failure) and deletes it: taken once, by one
/// node. Events a node wrote but did not take (it stopped) are taken by any node after a few
/// seconds (on PostgreSQL `FOR UPDATE SKIP LOCKED`).
///
/// An alert or fault rule on a data point fires on its transition (0→1 occurs, 1→0 recovers),
/// kept in the rule's row so that any node sees the same history; on a thing-model event of type
/// `alert` or `error` it fires when the event occurs. Conditions read the inputs' latest status;
/// `interval` is kept in the rule's row too.
final class RuleEngine: Sendable {
    let database: any SQLDatabase
    let catalogue: DeviceCatalogue
    let runner: AutomationRunner
    let clock: any WallClock
    let configuration: SchedulerConfiguration
    let logger: Logger
    /// The devices some rule watches, with the ticket of the read that found them: a read that
    /// began earlier never replaces one that began later (a rule just written here must not be
    /// hidden by a slower read from before it).
    private let watched = Mutex<(ticket: Int64, dids: Set<String>)>((-1, []))
    private let tickets = Atomic<Int64>(0)
    /// Rules as read and checked, by id, with the revision read: a rule is decoded once per
    /// revision, not at every event.
    private let decoded = Mutex<[String: (revision: Int64, record: RuleStore.Record)]>([:])

    /// How old an event must be before another node takes it.
    static let orphanMs: Int64 = 5000

    init(database: any SQLDatabase, catalogue: DeviceCatalogue, runner: AutomationRunner, configuration: SchedulerConfiguration, logger: Logger) {
        self.database = database
        self.catalogue = catalogue
        self.runner = runner
        self.clock = runner.clock
        self.configuration = configuration
        self.logger = logger
    }

    /// Reads the devices some rule watches again: after a rule is written here, and on every
    /// turn of the node's `AutomationLoop` (a rule written on another node is seen that late).
    /// Never on a device's uplink, so that a report never waits on this read to be stored.
    func refreshWatched() async {
        let ticket = tickets.wrappingAdd(1, ordering: .relaxed).newValue
        do {
            let fresh = try await RuleStore(database).watchedDevices()
            watched.withLock { if ticket > $0.ticket { $0 = (ticket, fresh) } }
        } catch {
            logger.warning("the devices rules watch could not be read", metadata: ["error": "\(error)"])
        }
    }

    /// Whether some rule watches `did`, as last read (only the very first call, before the
    /// node's loop has read them, waits on the database).
    func watches(_ did: String) async -> Bool {
        let (ticket, dids) = watched.withLock { $0 }
        if ticket >= 0 { return dids.contains(did) }
        await refreshWatched()
        return watched.withLock { $0.dids.contains(did) }
    }

    /// Writes a watched device's event (not a report: those go with the report's transaction)
    /// and takes it, unless `take` is false (a node stopping leaves it to the others).
    func record(did: String, _ kind: RuleStore.Event.Kind, body: JSONValue, take: Bool = true) async {
        guard await watches(did) else { return }
        do {
            let ids = try await RuleStore(database).enqueue([(did, kind, body)], atMs: Clock.unixMilliseconds())
            if take { await process(ids: ids) }
        } catch {
            logger.error("a device's event could not be kept for its rules", metadata: ["did": "\(did)", "error": "\(error)"])
        }
    }

    /// Takes events: those of `ids` (just written here), or else any left by a node that stopped.
    func process(ids: [Int64]?) async {
        do {
            while true {
                let (taken, runs) = try await batch(ids: ids)
                for run in runs { try await runner.advanceDue(runID: run) }
                if ids != nil || taken < configuration.batchSize { return }
            }
        } catch {
            if !Task.isCancelled { logger.warning("rules could not be evaluated", metadata: ["error": "\(error)"]) }
        }
    }

    /// What a batch of events needs, read once for all of them: the rules their devices
    /// trigger, the latest status of every device those rules read, and which of those devices
    /// each rule's user is still bound to.
    private struct Context {
        var rules: [String: [RuleStore.Record]]
        var statuses: [String: JSONObject]
        var bindings: Set<String>
        var labels: [String: [String]]

        func isBound(_ uid: String, _ did: String) -> Bool { bindings.contains("\(uid)\u{1F}\(did)") }
    }

    private func batch(ids: [Int64]?) async throws -> (Int, [String]) {
        let now = clock.nowMs()
        let limit = configuration.batchSize
        // No event left behind, the usual case: no transaction, no connection held.
        if ids == nil, try await !RuleStore(database).anyEvents(beforeMs: Clock.unixMilliseconds() - Self.orphanMs) { return (0, []) }
        return try await database.transaction { transaction in
            let store = RuleStore(transaction)
            let events = try await store.lockEvents(ids: ids, beforeMs: Clock.unixMilliseconds() - Self.orphanMs, limit: limit)
            if events.isEmpty { return (0, []) }
            let context = try await self.context(for: events, store: store, on: transaction)
            var runs: [String] = []
            for event in events {
                let candidates = Self.candidates(event, rules: context.rules[event.did] ?? [])
                // Most events set nothing off: no statement beyond the batch's.
                guard candidates.contains(where: { Self.mayWrite($0, event) || self.holds($0.fields, uid: $0.uid, context) }) else { continue }
                // One event's failure is its own: rolled back to here, logged, and dropped.
                try await transaction.query("SAVEPOINT rule_event")
                do {
                    let started = try await self.fire(candidates, for: event, context: context, nowMs: now, store: store, on: transaction)
                    try await transaction.query("RELEASE SAVEPOINT rule_event")
                    runs += started
                } catch {
                    try await transaction.query("ROLLBACK TO SAVEPOINT rule_event")
                    self.logger.warning("a device's event could not be evaluated", metadata: ["did": "\(event.did)", "error": "\(error)"])
                }
            }
            try await store.deleteEvents(events.map(\.id))
            return (events.count, runs)
        }
    }

    /// The rules `dids` trigger, by device: each read again only when its revision changed.
    private func rules(triggeredBy dids: Set<String>, store: RuleStore) async throws -> [String: [RuleStore.Record]] {
        let current = try await store.ruleRevisions(triggeredBy: dids)
        let known = decoded.withLock { $0 }
        let stale = current.filter { known[$0.id]?.revision != $0.revision }.map(\.id)
        var fresh: [String: (revision: Int64, record: RuleStore.Record)] = [:]
        for (record, revision) in try await store.rules(ids: stale) { fresh[record.id] = (revision, record) }
        if !fresh.isEmpty {
            decoded.withLock { cache in
                // Bounded: a node forgets what it decoded when it holds too many.
                if cache.count > 100_000 { cache.removeAll() }
                cache.merge(fresh) { _, new in new }
            }
        }
        var byDevice: [String: [RuleStore.Record]] = [:]
        for (id, revision) in current {
            guard let entry = fresh[id] ?? known[id], entry.revision == revision else { continue }
            byDevice[entry.record.fields.did, default: []].append(entry.record)
        }
        return byDevice
    }

    private func context(for events: [RuleStore.Event], store: RuleStore, on transaction: any SQLExecutor) async throws -> Context {
        let rules = try await self.rules(triggeredBy: Set(events.map(\.did)), store: store)
        let inputs = Set(rules.values.joined().flatMap { $0.fields.inputs.map(\.did) })
        var labels: [String: [String]] = [:]
        for rule in rules.values.joined() {
            for input in rule.fields.inputs where labels["\(input.productKey)\u{1F}"] == nil {
                labels["\(input.productKey)\u{1F}"] = []
                guard let model = try? await catalogue.model(input.productKey, on: transaction) else { continue }
                for point in model.dataPoints {
                    if case .enumeration(let names) = point.type { labels["\(input.productKey)\u{1F}\(point.name)"] = names }
                }
            }
        }
        return Context(rules: rules, statuses: try await store.statuses(Array(inputs)), bindings: try await store.bindings(of: inputs), labels: labels)
    }

    /// The rules of the event's device that its kind may set off.
    private static func candidates(_ event: RuleStore.Event, rules: [RuleStore.Record]) -> [RuleStore.Record] {
        rules.filter { rule in
            switch (rule.fields.event, event.kind) {
            case (.online, .online), (.offline, .offline), (.data, .data): return true
            case (.alert, .data), (.fault, .data):
                return rule.fields.eventAttr.map { event.body[$0.name] != nil } ?? false
            case (.alert, .event), (.fault, .event):
                let type = rule.fields.event == .alert ? "alert" : "error"
                return event.body["type"]?.stringValue == type && event.body["identifier"]?.stringValue == rule.fields.eventAttr?.name
                    && rule.fields.eventAttr?.occurs == true
            default: return false
            }
        }
    }

    /// Whether evaluating the rule on the event writes even when its conditions fail (an alert's
    /// transition is kept whatever follows).
    private static func mayWrite(_ rule: RuleStore.Record, _ event: RuleStore.Event) -> Bool {
        (rule.fields.event == .alert || rule.fields.event == .fault) && event.kind == .data
    }

    /// Fires the candidates whose transition, conditions and interval allow; their runs.
    private func fire(
        _ candidates: [RuleStore.Record], for event: RuleStore.Event, context: Context, nowMs now: Int64, store: RuleStore, on transaction: any SQLExecutor
    ) async throws -> [String] {
        var runs: [String] = []
        for rule in candidates {
            let fields = rule.fields
            if Self.mayWrite(rule, event), let attr = fields.eventAttr {
                guard let value = event.body[attr.name].flatMap(Self.number) else { continue }
                let active: Int64 = value != 0 ? 1 : 0
                guard try await store.transition(ruleID: rule.id, to: active), (active == 1) == attr.occurs else { continue }
            }
            guard holds(fields, uid: rule.uid, context) else { continue }
            guard try await store.claimFiring(ruleID: rule.id, nowMs: now) else { continue }
            let lanes = fields.outputs.map { group in
                group.map { step in
                    switch step {
                    case .delay(let seconds): SceneTaskBody(.delay(seconds: seconds))
                    case .control(let did, .attrs(let attrs)): SceneTaskBody(.device(did: did, .attrs(attrs)))
                    case .control(let did, .raw(let bytes)): SceneTaskBody(.device(did: did, .raw(bytes)))
                    }
                }
            }
            guard
                let run = try await AutomationRunner.start(
                    uid: rule.uid, appID: rule.appID, sceneID: nil, source: .rule, lanes: lanes, stopOnFailure: true, nowMs: now, on: transaction)
            else {
                logger.warning("a rule's user has too many automations running", metadata: ["rule": "\(rule.id)"])
                continue
            }
            runs.append(run)
        }
        return runs
    }

    /// Whether any group of the rule's conditions holds on its inputs' latest status (a rule
    /// without conditions always holds). An input the rule's user is no longer bound to reads as
    /// nothing: its comparisons fail.
    private func holds(_ fields: RuleFieldsBody, uid: String, _ context: Context) -> Bool {
        guard !fields.conditions.isEmpty else { return true }
        var inputs: [String: RuleInput] = [:]
        for input in fields.inputs where inputs[input.prefix] == nil { inputs[input.prefix] = input }
        func value(_ operand: RuleOperand) -> (number: Double?, text: String?)? {
            switch operand {
            case .number(let number): return (number, nil)
            case .string(let text): return (nil, text)
            case .reference(let prefix, let name):
                guard let input = inputs[prefix], context.isBound(uid, input.did), let json = context.statuses[input.did]?[name] else { return nil }
                if case .string(let text) = json {
                    return (context.labels["\(input.productKey)\u{1F}\(name)"]?.firstIndex(of: text).map(Double.init), text)
                }
                return Self.number(json).map { ($0, nil) }
            }
        }
        return fields.conditions.contains { group in
            group.allSatisfy { comparison in
                guard let left = value(comparison.left), let right = value(comparison.right) else { return false }
                return Self.compare(left, comparison.op, right)
            }
        }
    }

    static func compare(_ left: (number: Double?, text: String?), _ op: RuleOperator, _ right: (number: Double?, text: String?)) -> Bool {
        if let a = left.number, let b = right.number {
            switch op {
            case .greater: return a > b
            case .greaterOrEqual: return a >= b
            case .less: return a < b
            case .lessOrEqual: return a <= b
            case .equal: return a == b
            case .notEqual: return a != b
            }
        }
        guard let a = left.text, let b = right.text else { return false }
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        default: return false
        }
    }

    /// A reported value as a number: bools as 1 and 0.
    static func number(_ json: JSONValue) -> Double? {
        switch json {
        case .bool(let value): value ? 1 : 0
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}

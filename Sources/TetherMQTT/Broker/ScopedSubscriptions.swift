/// Server-side subscriptions that many clients hold, each with its own values at a few levels
/// (a gateway's `/sys/{product}/{device}/thing/service/+` for every device): the filters are kept
/// once, as templates whose `{}` levels stand for a client's values, and each client once, under
/// its values. The topic tree would hold a path of nodes per client and filter instead (about
/// 1.7 KiB per gateway device).
///
/// A value; the broker keeps it behind its lock.
struct ScopedSubscriptions<Subscriber: Hashable> {
    /// A template filter, cut into levels.
    struct Template {
        enum Level: Equatable {
            case literal(Substring)
            /// The client's value at this index of its scope.
            case value(Int)
            case plus
            case hash
        }

        let levels: [Level]
        let entry: TopicTree<Subscriber>.Entry
        /// The number of `{}` levels.
        let arity: Int
    }

    /// The level a template writes for a client's value.
    static var placeholder: Substring { "{}" }

    let templates: [Template]
    /// The most values any template uses: a scope must give at least that many.
    let arity: Int
    /// Each scope (its values joined by `/`, which no topic level contains) → its subscribers.
    private var holders: [String: SmallMap<Subscriber, Void>] = [:]

    /// Templates in which a level `{}` is the client's next value; the nth `{}` of a template is
    /// value n. Every template takes the same values: one with fewer `{}` than the most any
    /// has is left out. Subscription options come from each template (QoS capped at
    /// `maximumQoS`).
    init(templates: [MQTTTopicSubscription], maximumQoS: MQTTQoS = .exactlyOnce) {
        let parsed = templates.map { subscription in
            var options = subscription
            options.qos = min(options.qos, maximumQoS)
            var next = 0
            let parts = subscription.filter.split(separator: "/", omittingEmptySubsequences: false)
            let levels = parts.enumerated().map { index, level -> Template.Level in
                switch level {
                case Self.placeholder:
                    defer { next += 1 }
                    return .value(next)
                case "+": return .plus
                case "#" where index == parts.count - 1: return .hash
                default: return .literal(level)
                }
            }
            return Template(levels: levels, entry: TopicTree<Subscriber>.Entry(options: options, identifier: nil), arity: next)
        }
        let most = parsed.map(\.arity).max() ?? 0
        arity = most
        self.templates = parsed.filter { $0.arity == most }
    }

    var isEmpty: Bool { templates.isEmpty }

    /// The key of a scope, or nil when it cannot stand in a topic: too few values, or a value
    /// that is empty or holds `/`, `+`, `#` or NUL.
    func key(_ scope: [String]) -> String? {
        guard !templates.isEmpty, scope.count >= arity else { return nil }
        let used = scope.prefix(arity)
        for value in used {
            guard !value.isEmpty, !value.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == 0 })
            else { return nil }
        }
        return used.joined(separator: "/")
    }

    /// `subscriber` holds every template under `key` (from ``key(_:)``). Returns true when it is new.
    @discardableResult
    mutating func bind(_ subscriber: Subscriber, key: String) -> Bool {
        holders[key, default: SmallMap()].updateValue((), forKey: subscriber) == nil
    }

    /// `subscriber` no longer holds the templates under `key`. Returns true when it did.
    @discardableResult
    mutating func unbind(_ subscriber: Subscriber, key: String) -> Bool {
        guard var subscribers = holders[key] else { return false }
        let removed = subscribers.removeValue(forKey: subscriber) != nil
        holders[key] = subscribers.isEmpty ? nil : subscribers
        return removed
    }

    /// The number of subscribers bound, across scopes.
    var boundCount: Int { holders.values.reduce(0) { $0 + $1.count } }

    /// The concrete filters a scope holds (for retained messages at binding).
    func filters(key: String) -> [(filter: String, entry: TopicTree<Subscriber>.Entry)] {
        let values = key.split(separator: "/", omittingEmptySubsequences: false)
        return templates.map { template in
            let filter = template.levels.map { level -> Substring in
                switch level {
                case .literal(let text): text
                case .value(let index): values[index]
                case .plus: "+"
                case .hash: "#"
                }
            }.joined(separator: "/")
            return (filter, template.entry)
        }
    }

    /// The subscriptions matching a topic, cut into `levels`: one per template that matches
    /// and subscriber of the scope its values name.
    func matches(_ levels: [Substring], dollar: Bool, into result: inout [TopicTree<Subscriber>.Match]) {
        guard !holders.isEmpty else { return }
        var values: [Substring] = []
        for template in templates {
            guard Self.match(template, levels, dollar: dollar, values: &values), let subscribers = holders[values.joined(separator: "/")] else { continue }
            subscribers.forEach { subscriber, _ in result.append(TopicTree.Match(subscriber, template.entry)) }
        }
    }

    private static func match(_ template: Template, _ levels: [Substring], dollar: Bool, values: inout [Substring]) -> Bool {
        values.removeAll(keepingCapacity: true)
        // Topics starting with $ are not matched by a leading wildcard (MQTT §4.7.2), nor by a value.
        if dollar, let first = template.levels.first, first != .literal(levels[0]) { return false }
        for (index, level) in template.levels.enumerated() {
            switch level {
            case .hash:
                return true
            case _ where index >= levels.count:
                return false
            case .literal(let text):
                guard levels[index] == text else { return false }
            case .value:
                values.append(levels[index])
            case .plus:
                continue
            }
        }
        return template.levels.count == levels.count
    }
}

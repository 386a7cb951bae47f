/// Subscriptions indexed by topic filter levels, so that finding the subscribers of a topic costs
/// the depth of the topic, not the number of subscriptions.
///
/// A value; the broker keeps it behind its lock.
struct TopicTree<Subscriber: Hashable> {
    /// A gateway's tree has tens of thousands of nodes, one path per device, nearly all with one
    /// child or one subscriber: those are held inline (``SmallMap``), and what few nodes use
    /// (`#` subscribers, `$share` groups) is boxed, so that a node is one allocation.
    private final class Node {
        /// Keyed by String: a level of up to 15 bytes is stored inline, and a key does not keep
        /// the whole filter it was cut from alive.
        var children = SmallMap<String, Node>()
        var plus: Node?
        var here = SmallMap<Subscriber, Entry>()
        var rare: Rare?

        var isEmpty: Bool { children.isEmpty && plus == nil && here.isEmpty && rare == nil }

        func withRare<Result>(_ body: (Rare) -> Result) -> Result {
            let rare = self.rare ?? Rare()
            defer { self.rare = rare.isEmpty ? nil : rare }
            return body(rare)
        }
    }

    /// A node's `#` subscribers and `$share` groups.
    private final class Rare {
        var hash = SmallMap<Subscriber, Entry>()
        /// `$share` groups at this filter: group name → members in subscription order.
        var sharedHere: [String: SharedGroup] = [:]
        var sharedHash: [String: SharedGroup] = [:]

        var isEmpty: Bool { hash.isEmpty && sharedHere.isEmpty && sharedHash.isEmpty }
    }

    /// What delivery needs of a subscription, in 8 bytes (its filter is its place in the tree).
    struct Entry {
        var qos: MQTTQoS
        var noLocal: Bool
        var retainAsPublished: Bool
        /// The v5 subscription identifier; 0 for none (identifiers start at 1).
        var identifier: UInt32

        init(options: MQTTTopicSubscription, identifier: Int?) {
            qos = options.qos
            noLocal = options.noLocal
            retainAsPublished = options.retainAsPublished
            self.identifier = identifier.map { UInt32(clamping: $0) } ?? 0
        }
    }

    final class SharedGroup {
        var members: [(Subscriber, Entry)] = []
        var next = 0
    }

    /// One delivery decision: who, with which options.
    struct Match {
        let subscriber: Subscriber
        let qos: MQTTQoS
        let noLocal: Bool
        let retainAsPublished: Bool
        let identifier: Int?

        init(_ subscriber: Subscriber, _ entry: Entry) {
            self.subscriber = subscriber
            qos = entry.qos
            noLocal = entry.noLocal
            retainAsPublished = entry.retainAsPublished
            identifier = entry.identifier == 0 ? nil : Int(entry.identifier)
        }
    }

    private var root = Node()
    private(set) var count = 0
    /// Server-side subscriptions held by many subscribers up to their own values.
    private(set) var scoped = ScopedSubscriptions<Subscriber>(templates: [])
    /// Matches by topic, for topics matched by no shared group (those rotate): devices publish to
    /// the same few topics over and over. Cleared by every subscription change. Kept small: each
    /// of a gateway's devices publishes to topics of its own, once a minute or so, and an entry
    /// takes about 130 bytes (16,384 of them were 0.1 KiB per device of a node with 19,000).
    private var cache: [String: [Match]] = [:]
    private static var cacheLimit: Int { 2_048 }

    /// The templates subscribers bind to with ``bind(_:scope:)``; set before any binds.
    mutating func setTemplates(_ templates: [MQTTTopicSubscription], maximumQoS: MQTTQoS) {
        cache.removeAll(keepingCapacity: true)
        scoped = ScopedSubscriptions(templates: templates, maximumQoS: maximumQoS)
    }

    /// `subscriber` holds every template under `key` (``ScopedSubscriptions/key(_:)``).
    /// Returns true when it is new.
    @discardableResult
    mutating func bind(_ subscriber: Subscriber, scope key: String) -> Bool {
        cache.removeAll(keepingCapacity: true)
        let isNew = scoped.bind(subscriber, key: key)
        if isNew { count += scoped.templates.count }
        return isNew
    }

    /// `subscriber` no longer holds the templates under `key`. Returns true when it did.
    @discardableResult
    mutating func unbind(_ subscriber: Subscriber, scope key: String) -> Bool {
        cache.removeAll(keepingCapacity: true)
        let removed = scoped.unbind(subscriber, key: key)
        if removed { count -= scoped.templates.count }
        return removed
    }

    /// Adds or replaces a subscription. Returns true when it is new.
    @discardableResult
    mutating func insert(_ subscriber: Subscriber, options: MQTTTopicSubscription, identifier: Int? = nil) -> Bool {
        cache.removeAll(keepingCapacity: true)
        let (group, filter) = MQTTTopic.sharedSubscription(options.filter).map { (Optional($0.group), $0.filter) } ?? (nil, options.filter)
        var node = root
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let entry = Entry(options: options, identifier: identifier)
        for (index, level) in levels.enumerated() {
            if level == "#", index == levels.count - 1 {
                let isNew = node.withRare { rare in
                    guard let group else { return rare.hash.updateValue(entry, forKey: subscriber) == nil }
                    return Self.join(subscriber, entry, group: group, shared: &rare.sharedHash)
                }
                if isNew { count += 1 }
                return isNew
            }
            if level == "+" {
                if node.plus == nil { node.plus = Node() }
                node = node.plus!
            } else if let child = node.children[String(level)] {
                node = child
            } else {
                let child = Node()
                node.children.updateValue(child, forKey: String(level))
                node = child
            }
        }
        let isNew: Bool
        if let group {
            isNew = node.withRare { rare in Self.join(subscriber, entry, group: group, shared: &rare.sharedHere) }
        } else {
            isNew = node.here.updateValue(entry, forKey: subscriber) == nil
        }
        if isNew { count += 1 }
        return isNew
    }

    /// Adds a member to a `$share` group, or updates its entry. Returns true when it is new.
    private static func join(_ subscriber: Subscriber, _ entry: Entry, group: String, shared: inout [String: SharedGroup]) -> Bool {
        let members = shared[group] ?? SharedGroup()
        shared[group] = members
        if let index = members.members.firstIndex(where: { $0.0 == subscriber }) {
            members.members[index].1 = entry
            return false
        }
        members.members.append((subscriber, entry))
        return true
    }

    /// Removes a subscription. Returns true when it existed.
    @discardableResult
    mutating func remove(_ subscriber: Subscriber, filter fullFilter: String) -> Bool {
        cache.removeAll(keepingCapacity: true)
        let (group, filter) = MQTTTopic.sharedSubscription(fullFilter).map { (Optional($0.group), $0.filter) } ?? (nil, fullFilter)
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let removed = Self.remove(subscriber, group: group, levels: levels[...], from: root)
        if removed { count -= 1 }
        return removed
    }

    private static func remove(_ subscriber: Subscriber, group: String?, levels: ArraySlice<Substring>, from node: Node) -> Bool {
        guard let level = levels.first else {
            guard let group else { return node.here.removeValue(forKey: subscriber) != nil }
            guard node.rare != nil else { return false }
            return node.withRare { rare in removeShared(subscriber, group: group, shared: &rare.sharedHere) }
        }
        if level == "#", levels.count == 1 {
            guard node.rare != nil else { return false }
            return node.withRare { rare in
                guard let group else { return rare.hash.removeValue(forKey: subscriber) != nil }
                return removeShared(subscriber, group: group, shared: &rare.sharedHash)
            }
        }
        let child = level == "+" ? node.plus : node.children[String(level)]
        guard let child else { return false }
        let removed = remove(subscriber, group: group, levels: levels.dropFirst(), from: child)
        if child.isEmpty {
            if level == "+" { node.plus = nil } else { node.children.removeValue(forKey: String(level)) }
        }
        return removed
    }

    private static func removeShared(_ subscriber: Subscriber, group: String, shared: inout [String: SharedGroup]) -> Bool {
        guard let members = shared[group], let index = members.members.firstIndex(where: { $0.0 == subscriber }) else { return false }
        members.members.remove(at: index)
        if members.members.isEmpty { shared[group] = nil }
        return true
    }

    /// Every subscription that matches `topic`. Shared groups contribute one member each, chosen
    /// round robin. A subscriber with several matching plain subscriptions appears once per
    /// subscription; the broker merges them.
    mutating func matches(_ topic: String) -> [Match] {
        if let cached = cache[topic] { return cached }
        var result: [Match] = []
        var rotated = false
        // Levels split on the byte "/" (not on grapheme clusters: much cheaper, the same result).
        let levels = topic.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }
        // Topics starting with $ are not matched by a leading wildcard (MQTT §4.7.2).
        let dollar = topic.utf8.first == UInt8(ascii: "$")
        Self.collect(levels[...], node: root, atRoot: true, dollar: dollar, into: &result, rotated: &rotated)
        scoped.matches(levels, dollar: dollar, into: &result)
        if !rotated {
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[topic] = result
        }
        return result
    }

    private static func collect(_ levels: ArraySlice<Substring>, node: Node, atRoot: Bool, dollar: Bool, into result: inout [Match], rotated: inout Bool) {
        let wildcardsAllowed = !(atRoot && dollar)
        if wildcardsAllowed, let rare = node.rare {
            append(rare.hash, rare.sharedHash, into: &result, rotated: &rotated)
        }
        guard let level = levels.first else {
            append(node.here, node.rare?.sharedHere ?? [:], into: &result, rotated: &rotated)
            return
        }
        let rest = levels.dropFirst()
        if let child = node.children[String(level)] { collect(rest, node: child, atRoot: false, dollar: dollar, into: &result, rotated: &rotated) }
        if wildcardsAllowed, let plus = node.plus { collect(rest, node: plus, atRoot: false, dollar: dollar, into: &result, rotated: &rotated) }
    }

    private static func append(_ plain: SmallMap<Subscriber, Entry>, _ shared: [String: SharedGroup], into result: inout [Match], rotated: inout Bool) {
        if !shared.isEmpty { rotated = true }
        plain.forEach { subscriber, entry in
            result.append(Match(subscriber, entry))
        }
        for group in shared.values where !group.members.isEmpty {
            let (subscriber, entry) = group.members[group.next % group.members.count]
            group.next &+= 1
            result.append(Match(subscriber, entry))
        }
    }
}

/// Subscriptions indexed by topic filter levels, so that finding the subscribers of a topic costs
/// the depth of the topic, not the number of subscriptions.
///
/// A value; the broker keeps it behind its lock.
struct TopicTree<Subscriber: Hashable> {
    private final class Node {
        var children: [Substring: Node] = [:]
        var plus: Node?
        var hash: [Subscriber: Entry] = [:]
        var here: [Subscriber: Entry] = [:]
        /// `$share` groups at this filter: group name → members in subscription order.
        var sharedHere: [String: SharedGroup] = [:]
        var sharedHash: [String: SharedGroup] = [:]

        var isEmpty: Bool {
            children.isEmpty && plus == nil && hash.isEmpty && here.isEmpty && sharedHere.isEmpty && sharedHash.isEmpty
        }
    }

    struct Entry {
        var options: MQTTTopicSubscription
        var identifier: Int?
    }

    final class SharedGroup {
        var members: [(Subscriber, Entry)] = []
        var next = 0
    }

    /// One delivery decision: who, with which options.
    struct Match {
        let subscriber: Subscriber
        let options: MQTTTopicSubscription
        let identifier: Int?
    }

    private var root = Node()
    private(set) var count = 0
    /// Matches by topic, for topics matched by no shared group (those rotate): devices publish to
    /// the same few topics over and over. Cleared by every subscription change.
    private var cache: [String: [Match]] = [:]
    private static var cacheLimit: Int { 16_384 }

    /// Adds or replaces a subscription. Returns true when it is new.
    @discardableResult
    mutating func insert(_ subscriber: Subscriber, options: MQTTTopicSubscription, identifier: Int? = nil) -> Bool {
        cache.removeAll(keepingCapacity: true)
        let (group, filter) = MQTTTopic.sharedSubscription(options.filter).map { (Optional($0.group), $0.filter) } ?? (nil, options.filter)
        var node = root
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level == "#", index == levels.count - 1 {
                return Self.store(subscriber, Entry(options: options, identifier: identifier), group: group, in: &node.hash, shared: &node.sharedHash, count: &count)
            }
            if level == "+" {
                if node.plus == nil { node.plus = Node() }
                node = node.plus!
            } else {
                if node.children[level] == nil { node.children[level] = Node() }
                node = node.children[level]!
            }
        }
        return Self.store(subscriber, Entry(options: options, identifier: identifier), group: group, in: &node.here, shared: &node.sharedHere, count: &count)
    }

    private static func store(_ subscriber: Subscriber, _ entry: Entry, group: String?, in plain: inout [Subscriber: Entry], shared: inout [String: SharedGroup], count: inout Int) -> Bool {
        guard let group else {
            let isNew = plain.updateValue(entry, forKey: subscriber) == nil
            if isNew { count += 1 }
            return isNew
        }
        let members = shared[group] ?? SharedGroup()
        shared[group] = members
        if let index = members.members.firstIndex(where: { $0.0 == subscriber }) {
            members.members[index].1 = entry
            return false
        }
        members.members.append((subscriber, entry))
        count += 1
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
        guard let level = levels.first else { return removeEntry(subscriber, group: group, plain: &node.here, shared: &node.sharedHere) }
        if level == "#", levels.count == 1 { return removeEntry(subscriber, group: group, plain: &node.hash, shared: &node.sharedHash) }
        let child = level == "+" ? node.plus : node.children[level]
        guard let child else { return false }
        let removed = remove(subscriber, group: group, levels: levels.dropFirst(), from: child)
        if child.isEmpty {
            if level == "+" { node.plus = nil } else { node.children[level] = nil }
        }
        return removed
    }

    private static func removeEntry(_ subscriber: Subscriber, group: String?, plain: inout [Subscriber: Entry], shared: inout [String: SharedGroup]) -> Bool {
        guard let group else { return plain.removeValue(forKey: subscriber) != nil }
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
        if !rotated {
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[topic] = result
        }
        return result
    }

    private static func collect(_ levels: ArraySlice<Substring>, node: Node, atRoot: Bool, dollar: Bool, into result: inout [Match], rotated: inout Bool) {
        let wildcardsAllowed = !(atRoot && dollar)
        if wildcardsAllowed {
            append(node.hash, node.sharedHash, into: &result, rotated: &rotated)
        }
        guard let level = levels.first else {
            append(node.here, node.sharedHere, into: &result, rotated: &rotated)
            return
        }
        let rest = levels.dropFirst()
        if let child = node.children[level] { collect(rest, node: child, atRoot: false, dollar: dollar, into: &result, rotated: &rotated) }
        if wildcardsAllowed, let plus = node.plus { collect(rest, node: plus, atRoot: false, dollar: dollar, into: &result, rotated: &rotated) }
    }

    private static func append(_ plain: [Subscriber: Entry], _ shared: [String: SharedGroup], into result: inout [Match], rotated: inout Bool) {
        if !shared.isEmpty { rotated = true }
        for (subscriber, entry) in plain {
            result.append(Match(subscriber: subscriber, options: entry.options, identifier: entry.identifier))
        }
        for group in shared.values where !group.members.isEmpty {
            let (subscriber, entry) = group.members[group.next % group.members.count]
            group.next &+= 1
            result.append(Match(subscriber: subscriber, options: entry.options, identifier: entry.identifier))
        }
    }
}

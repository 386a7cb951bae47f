/// An ACL file in mosquitto's format (`mosquitto.conf(5)`, "acl_file"):
///
/// ```
/// # before any user line: rules for clients without a user name
/// topic read public/#
/// user alice
/// topic readwrite home/alice/#
/// topic deny home/alice/secret
/// # every client; %u is its user name, %c its client id
/// pattern write devices/%c/up
/// pattern read devices/%u/down/#
/// ```
///
/// Access is `read`, `write`, `readwrite` (the default) or `deny`, as in mosquitto:
/// - a client may publish to a topic that one of its `write` rules matches and no `deny` rule does;
/// - it may subscribe to a filter that no `deny` rule matches (the filter read as a topic, as
///   mosquitto reads it) and that some `read` rule could deliver anything to (the two filters
///   intersect);
/// - it receives a message only if a `read` rule matches its topic and no `deny` rule does
///   (checked for every delivery, so `#` may be subscribed and still carry nothing denied).
/// A pattern whose `%u` or `%c` would take a value holding `+`, `#` or `/` matches nothing.
public struct MQTTAccessControlList: Sendable, Equatable {
    public enum Access: String, Sendable, Equatable {
        case read
        case write
        case readwrite
        case deny
    }

    public struct Rule: Sendable, Equatable {
        public var access: Access
        /// A topic filter; in patterns, `%u` and `%c` are substituted.
        public var filter: String
    }

    /// Rules for clients without a user name (before the first `user` line).
    public private(set) var anonymous: [Rule] = []
    /// Rules by user name.
    public private(set) var users: [String: [Rule]] = [:]
    /// Rules for every client, with substitution.
    public private(set) var patterns: [Rule] = []

    public init() {}

    /// Reads the file at `path`.
    public static func load(path: String) throws(MQTTError) -> MQTTAccessControlList {
        try MQTTAccessControlList(parsing: try BrokerFileText.read(path), name: path)
    }

    public init(parsing text: String, name: String = "ACL file") throws(MQTTError) {
        var user: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw).trimmingASCIIWhitespace
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            func fail(_ message: String) -> MQTTError { MQTTError(.invalidConfiguration, "\(name):\(index + 1): \(message)") }
            let (keyword, rest) = Self.split(line)
            switch keyword {
            case "user":
                guard !rest.isEmpty else { throw fail("user needs a user name") }
                user = rest
                if users[rest] == nil { users[rest] = [] }
            case "topic", "pattern":
                var (first, remainder) = Self.split(rest)
                var access = Access.readwrite
                if let given = Access(rawValue: first), !remainder.isEmpty {
                    access = given
                } else {
                    remainder = rest
                    first = ""
                }
                guard !remainder.isEmpty else { throw fail("\(keyword) needs a topic") }
                let probe = remainder.replacingPlaceholders(user: "u", client: "c")
                do {
                    try MQTTTopic.validateFilter(probe)
                } catch {
                    throw fail("\(remainder) is not a topic filter: \(error.message)")
                }
                let rule = Rule(access: access, filter: remainder)
                if keyword == "pattern" {
                    patterns.append(rule)
                } else if let user {
                    users[user, default: []].append(rule)
                } else {
                    anonymous.append(rule)
                }
            default:
                throw fail("expected user, topic or pattern, not \(keyword)")
            }
        }
    }

    private static func split(_ text: String) -> (String, String) {
        guard let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (text, "") }
        return (String(text[..<space]), String(text[space...]).trimmingASCIIWhitespace)
    }

    /// The rules that apply to a client: its user's (or the anonymous ones) and the patterns,
    /// substituted.
    func rules(username: String?, clientID: String) -> [Rule] {
        var rules = username.map { users[$0] ?? [] } ?? anonymous
        for pattern in patterns {
            let needsUser = pattern.filter.contains("%u"), needsClient = pattern.filter.contains("%c")
            if needsUser, !Self.isSubstitutable(username) { continue }
            if needsClient, !Self.isSubstitutable(clientID) { continue }
            rules.append(Rule(access: pattern.access, filter: pattern.filter.replacingPlaceholders(user: username ?? "", client: clientID)))
        }
        return rules
    }

    private static func isSubstitutable(_ value: String?) -> Bool {
        guard let value, !value.isEmpty else { return false }
        return !value.contains(where: { $0 == "+" || $0 == "#" || $0 == "/" })
    }

    /// Whether the client may publish to `topic`.
    public func mayPublish(username: String?, clientID: String, topic: String) -> Bool {
        let rules = rules(username: username, clientID: clientID)
        if rules.contains(where: { $0.access == .deny && MQTTTopic.matches(filter: $0.filter, topic: topic) }) { return false }
        return rules.contains { ($0.access == .write || $0.access == .readwrite) && MQTTTopic.matches(filter: $0.filter, topic: topic) }
    }

    /// Whether the client may subscribe to `filter` (a `$share/group/` prefix is looked through).
    public func maySubscribe(username: String?, clientID: String, filter: String) -> Bool {
        let filter = MQTTTopic.sharedSubscription(filter)?.filter ?? filter
        let rules = rules(username: username, clientID: clientID)
        if rules.contains(where: { $0.access == .deny && MQTTTopic.matches(filter: $0.filter, topic: filter) }) { return false }
        return rules.contains { ($0.access == .read || $0.access == .readwrite) && Self.intersects($0.filter, filter) }
    }

    /// Whether the client may receive a message on `topic`.
    public func mayReceive(username: String?, clientID: String, topic: String) -> Bool {
        let rules = rules(username: username, clientID: clientID)
        if rules.contains(where: { $0.access == .deny && MQTTTopic.matches(filter: $0.filter, topic: topic) }) { return false }
        return rules.contains { ($0.access == .read || $0.access == .readwrite) && MQTTTopic.matches(filter: $0.filter, topic: topic) }
    }

    /// Whether some topic matches both filters.
    static func intersects(_ first: String, _ second: String) -> Bool {
        let a = first.split(separator: "/", omittingEmptySubsequences: false)
        let b = second.split(separator: "/", omittingEmptySubsequences: false)
        var index = 0
        while true {
            let aDone = index >= a.count, bDone = index >= b.count
            if aDone && bDone { return true }
            // A wildcard at the first level never meets a $-topic.
            if index == 0, !aDone, !bDone, (a[0] == "+" || a[0] == "#") && b[0].hasPrefix("$") || (b[0] == "+" || b[0] == "#") && a[0].hasPrefix("$") {
                return false
            }
            if (!aDone && a[index] == "#") || (!bDone && b[index] == "#") {
                // `#` also matches the parent level ("a/#" matches "a"), and the other filter's
                // rest is some topic.
                return true
            }
            if aDone || bDone { return false }
            let x = a[index], y = b[index]
            if x != "+", y != "+", x != y { return false }
            index += 1
        }
    }
}

extension String {
    func replacingPlaceholders(user: String, client: String) -> String {
        var output = ""
        var iterator = makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                output.append(character)
                continue
            }
            switch iterator.next() {
            case "u"?: output += user
            case "c"?: output += client
            case let other?: output.append("%"); output.append(other)
            case nil: output.append("%")
            }
        }
        return output
    }
}

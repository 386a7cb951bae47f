/// Topic names and filters (MQTT §4.7).
public enum MQTTTopic {
    /// A topic name for PUBLISH: not empty, no `+` or `#`, no U+0000, at most 65,535 bytes.
    public static func validateName(_ name: String) throws(MQTTError) {
        guard !name.isEmpty else { throw MQTTError(.invalidArgument, "a topic name must not be empty", reasonCode: .topicNameInvalid) }
        guard name.utf8.count <= 65_535 else { throw MQTTError(.invalidArgument, "a topic name is at most 65,535 bytes", reasonCode: .topicNameInvalid) }
        // Over the string's own bytes when it has them (native strings do): checked for every
        // publication a broker routes.
        let hasWildcard =
            name.utf8.withContiguousStorageIfAvailable { bytes in bytes.contains(where: isForbiddenInName) }
            ?? name.utf8.contains(where: isForbiddenInName)
        if hasWildcard {
            throw MQTTError(.invalidArgument, "a topic name must not contain wildcards (\(name))", reasonCode: .topicNameInvalid)
        }
    }

    private static func isForbiddenInName(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") || byte == 0
    }

    /// A topic filter for SUBSCRIBE/UNSUBSCRIBE: `#` only as the whole last level, `+` only as a
    /// whole level; `$share/GROUP/FILTER` with a non-empty group without wildcards.
    public static func validateFilter(_ filter: String) throws(MQTTError) {
        guard !filter.isEmpty, filter.utf8.count <= 65_535, !filter.utf8.contains(0) else {
            throw MQTTError(.invalidArgument, "a topic filter must not be empty", reasonCode: .topicFilterInvalid)
        }
        var levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        if levels.first == "$share" {
            guard levels.count >= 3, !levels[1].isEmpty, !levels[1].contains("+"), !levels[1].contains("#") else {
                throw MQTTError(.invalidArgument, "a shared subscription is $share/GROUP/FILTER (\(filter))", reasonCode: .topicFilterInvalid)
            }
            levels.removeFirst(2)
        }
        for (index, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || index != levels.count - 1 {
                throw MQTTError(.invalidArgument, "# must be the whole last level of a filter (\(filter))", reasonCode: .topicFilterInvalid)
            }
            if level.contains("+"), level != "+" {
                throw MQTTError(.invalidArgument, "+ must be a whole level of a filter (\(filter))", reasonCode: .topicFilterInvalid)
            }
        }
    }

    /// The group and the filter of a shared subscription, `$share/GROUP/FILTER`.
    public static func sharedSubscription(_ filter: String) -> (group: String, filter: String)? {
        guard filter.hasPrefix("$share/") else { return nil }
        let rest = filter.dropFirst("$share/".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (String(rest[..<slash]), String(rest[rest.index(after: slash)...]))
    }

    /// Whether `topic` matches `filter`. Topics beginning with `$` are not matched by filters
    /// beginning with a wildcard (MQTT §4.7.2).
    public static func matches(filter: String, topic: String) -> Bool {
        let filterLevels = filter.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let topicLevels = topic.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        if topic.utf8.first == UInt8(ascii: "$"), let first = filterLevels.first, first.elementsEqual("+".utf8) || first.elementsEqual("#".utf8) {
            return false
        }
        var index = 0
        for level in filterLevels {
            if level.elementsEqual("#".utf8) { return true }
            guard index < topicLevels.count else { return false }
            if !level.elementsEqual("+".utf8), !level.elementsEqual(topicLevels[index]) { return false }
            index += 1
        }
        return index == topicLevels.count
    }
}

import Testing
import TetherCore
@testable import TetherMQTT

@Suite("Topic tree")
struct TopicTreeTests {
    private func subscription(_ filter: String) -> MQTTTopicSubscription {
        MQTTTopicSubscription(filter: filter, qos: .atLeastOnce)
    }

    private func subscribers(_ tree: inout TopicTree<Int>, _ topic: String) -> [Int] {
        tree.matches(topic).map(\.subscriber).sorted()
    }

    @Test("wildcards, the parent of #, and the $ rule")
    func wildcards() {
        var tree = TopicTree<Int>()
        tree.insert(1, options: subscription("sport/tennis/player1"))
        tree.insert(2, options: subscription("sport/+/player1"))
        tree.insert(3, options: subscription("sport/#"))
        tree.insert(4, options: subscription("#"))
        tree.insert(5, options: subscription("+/+/+"))
        tree.insert(6, options: subscription("$SYS/#"))
        tree.insert(7, options: subscription("/leading/+"))
        #expect(subscribers(&tree, "sport/tennis/player1") == [1, 2, 3, 4, 5])
        #expect(subscribers(&tree, "sport") == [3, 4])
        #expect(subscribers(&tree, "$SYS/broker/load") == [6])
        #expect(subscribers(&tree, "/leading/x") == [4, 5, 7])
        #expect(tree.count == 7)
    }

    @Test("many subscribers on one filter, and back to one")
    func manyThenOne() {
        var tree = TopicTree<Int>()
        for subscriber in 0..<50 { tree.insert(subscriber, options: subscription("a/b")) }
        #expect(subscribers(&tree, "a/b") == Array(0..<50))
        for subscriber in 1..<50 {
            let removed = tree.remove(subscriber, filter: "a/b")
            #expect(removed)
        }
        #expect(subscribers(&tree, "a/b") == [0])
        let absent = tree.remove(7, filter: "a/b")
        let last = tree.remove(0, filter: "a/b")
        #expect(!absent && last)
        #expect(subscribers(&tree, "a/b").isEmpty)
        #expect(tree.count == 0)
    }

    @Test("a second subscription to the same filter replaces the first")
    func replace() {
        var tree = TopicTree<Int>()
        let first = tree.insert(1, options: MQTTTopicSubscription(filter: "x/#", qos: .atMostOnce))
        let second = tree.insert(1, options: MQTTTopicSubscription(filter: "x/#", qos: .exactlyOnce))
        #expect(first && !second)
        let qos = tree.matches("x/y").map(\.qos)
        #expect(qos == [.exactlyOnce])
        #expect(tree.count == 1)
    }

    @Test("shared subscriptions: one member of each group per message, in turn")
    func shared() {
        var tree = TopicTree<Int>()
        tree.insert(1, options: subscription("$share/g/jobs/#"))
        tree.insert(2, options: subscription("$share/g/jobs/#"))
        tree.insert(3, options: subscription("$share/h/jobs/+"))
        tree.insert(4, options: subscription("jobs/+"))
        var firstGroup: [Int] = []
        for _ in 0..<4 {
            let matched = subscribers(&tree, "jobs/build")
            #expect(matched.count == 3)
            #expect(matched.contains(3) && matched.contains(4))
            firstGroup.append(contentsOf: matched.filter { $0 == 1 || $0 == 2 })
        }
        #expect(firstGroup.sorted() == [1, 1, 2, 2])
        let removed = [tree.remove(1, filter: "$share/g/jobs/#"), tree.remove(2, filter: "$share/g/jobs/#"), tree.remove(3, filter: "$share/h/jobs/+")]
        #expect(removed == [true, true, true])
        #expect(subscribers(&tree, "jobs/build") == [4])
    }

    /// The tree against the definition of matching, over random filters, topics, insertions and
    /// removals (seeded: a failure is reproducible).
    @Test("random subscriptions and removals agree with MQTTTopic.matches")
    func againstDefinition() {
        var generator = SplitMix64(seed: 0x7e7_4e2)
        let levels = ["a", "b", "c", "$SYS", ""]
        func randomTopic() -> String {
            (0..<Int.random(in: 1...4, using: &generator)).map { _ in levels.randomElement(using: &generator)! }.joined(separator: "/")
        }
        func randomFilter() -> String {
            var parts = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                Int.random(in: 0..<4, using: &generator) == 0 ? "+" : levels.randomElement(using: &generator)!
            }
            if Bool.random(using: &generator) { parts.append("#") }
            return parts.joined(separator: "/")
        }
        var tree = TopicTree<Int>()
        var reference: [Int: Set<String>] = [:]
        for _ in 0..<2_000 {
            let subscriber = Int.random(in: 0..<20, using: &generator)
            let filter = randomFilter()
            if Int.random(in: 0..<3, using: &generator) == 0, let existing = reference[subscriber]?.randomElement(using: &generator) {
                let removed = tree.remove(subscriber, filter: existing)
                #expect(removed)
                reference[subscriber]!.remove(existing)
            } else {
                let isNew = reference[subscriber, default: []].insert(filter).inserted
                let inserted = tree.insert(subscriber, options: subscription(filter))
                #expect(inserted == isNew)
            }
            let topic = randomTopic()
            var expected: [Int] = []
            for (subscriber, filters) in reference {
                for filter in filters where MQTTTopic.matches(filter: filter, topic: topic) { expected.append(subscriber) }
            }
            let matched = subscribers(&tree, topic)
            #expect(matched == expected.sorted(), "topic \(topic)")
        }
        #expect(tree.count == reference.values.map(\.count).reduce(0, +))
    }
}

@Suite("SmallMap")
struct SmallMapTests {
    @Test("inline, array and dictionary storage agree on every key, up and back down")
    func everyShape() {
        var map = SmallMap<String, Int>()
        let keys = (0..<(SmallMap<String, Int>.fewLimit * 2)).map { "level-\($0)" }
        for (index, key) in keys.enumerated() {
            let previous = map.updateValue(index, forKey: key)
            #expect(previous == nil)
            #expect(map.count == index + 1)
            #expect(keys[...index].allSatisfy { map[$0] == keys.firstIndex(of: $0) })
        }
        let replaced = map.updateValue(-1, forKey: keys[3])
        #expect(replaced == 3 && map[keys[3]] == -1)
        for (index, key) in keys.enumerated().reversed() {
            let removed = map.removeValue(forKey: key)
            #expect(removed == (index == 3 ? -1 : index))
            #expect(map.count == index)
            #expect(map[key] == nil)
            var seen: [String] = []
            map.forEach { key, _ in seen.append(key) }
            #expect(Set(seen) == Set(keys[..<index]))
        }
        #expect(map.isEmpty)
    }
}

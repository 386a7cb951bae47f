import Testing
import TetherCore
@testable import TetherMQTT

@Suite("Server-side subscriptions kept once, as templates with each subscriber's values")
struct ScopedSubscriptionsTests {
    private func templates(_ filters: String...) -> [MQTTTopicSubscription] {
        filters.map { MQTTTopicSubscription(filter: $0, qos: .atLeastOnce) }
    }

    private func subscribers(_ tree: inout TopicTree<Int>, _ topic: String) -> [Int] {
        tree.matches(topic).map(\.subscriber).sorted()
    }

    @Test("a topic reaches the subscribers bound under the values it carries, through every template it matches")
    func matching() throws {
        var tree = TopicTree<Int>()
        tree.setTemplates(templates("/sys/{}/{}/thing/service/+", "/ext/rrpc/+/sys/{}/{}/thing/service/+", "/sys/{}/{}/down/#"), maximumQoS: .atLeastOnce)
        let lamp = try #require(tree.scoped.key(["pk", "lamp"]))
        let fan = try #require(tree.scoped.key(["pk", "fan"]))
        let bound = [tree.bind(1, scope: lamp), tree.bind(2, scope: fan), tree.bind(3, scope: lamp), tree.bind(3, scope: lamp)]
        #expect(bound == [true, true, true, false], "the last was bound already")
        #expect(tree.count == 9)
        #expect(subscribers(&tree, "/sys/pk/lamp/thing/service/set") == [1, 3])
        #expect(subscribers(&tree, "/ext/rrpc/42/sys/pk/fan/thing/service/get") == [2])
        #expect(subscribers(&tree, "/sys/pk/fan/down") == [2], "# matches its parent level")
        #expect(subscribers(&tree, "/sys/pk/fan/down/a/b") == [2])
        #expect(subscribers(&tree, "/sys/pk/lamp/thing/service").isEmpty, "too short")
        #expect(subscribers(&tree, "/sys/pk/lamp/thing/service/set/more").isEmpty, "too long")
        #expect(subscribers(&tree, "/sys/other/lamp/thing/service/set").isEmpty, "nobody holds these values")
        // Values join with "/": a topic cannot forge a key from other levels.
        #expect(subscribers(&tree, "/sys/pk/lamp/x/thing/service/set").isEmpty)
        let unbound = [tree.unbind(1, scope: lamp), tree.unbind(1, scope: lamp)]
        #expect(unbound == [true, false])
        #expect(subscribers(&tree, "/sys/pk/lamp/thing/service/set") == [3])
        let last = tree.unbind(3, scope: lamp)
        #expect(last)
        #expect(subscribers(&tree, "/sys/pk/lamp/thing/service/set").isEmpty)
        #expect(tree.count == 3)
        #expect(tree.scoped.boundCount == 1)
    }

    @Test("options come from the template, QoS capped; plain subscriptions and templates both match")
    func optionsAndPlain() throws {
        var tree = TopicTree<Int>()
        tree.setTemplates([MQTTTopicSubscription(filter: "d/{}/set", qos: .exactlyOnce, noLocal: true)], maximumQoS: .atLeastOnce)
        tree.bind(1, scope: try #require(tree.scoped.key(["x"])))
        tree.insert(2, options: MQTTTopicSubscription(filter: "d/+/set", qos: .atMostOnce))
        let matches = tree.matches("d/x/set").sorted { $0.subscriber < $1.subscriber }
        #expect(matches.map(\.subscriber) == [1, 2])
        #expect(matches[0].qos == .atLeastOnce && matches[0].noLocal)
        #expect(matches[1].qos == .atMostOnce && !matches[1].noLocal)
    }

    @Test("values that cannot stand in a topic, too few values, and templates taking fewer values are refused")
    func validation() {
        let scoped = ScopedSubscriptions<Int>(templates: templates("a/{}/{}", "b/{}", "c/{}/{}/#"))
        #expect(scoped.templates.count == 2, "b/{} takes one value where the others take two")
        #expect(scoped.key(["p", "d"]) == "p/d")
        #expect(scoped.key(["p", "d", "extra"]) == "p/d")
        #expect(scoped.key(["p"]) == nil)
        for bad in ["", "a/b", "+", "#", "x#", "nul\u{0}"] { #expect(scoped.key(["p", bad]) == nil, "\(bad)") }
        #expect(ScopedSubscriptions<Int>(templates: []).key(["p"]) == nil)
        #expect(scoped.filters(key: "p/d").map(\.filter) == ["a/p/d", "c/p/d/#"])
    }

    @Test("a topic starting with $ is not matched by a template starting with a value or a wildcard")
    func dollar() throws {
        var tree = TopicTree<Int>()
        tree.setTemplates(templates("{}/status", "$dev/{}/status"), maximumQoS: .atLeastOnce)
        tree.bind(1, scope: try #require(tree.scoped.key(["$dev"])))
        tree.bind(2, scope: try #require(tree.scoped.key(["lamp"])))
        #expect(subscribers(&tree, "$dev/status").isEmpty)
        #expect(subscribers(&tree, "$dev/lamp/status") == [2])
        #expect(subscribers(&tree, "lamp/status") == [2])
    }
}

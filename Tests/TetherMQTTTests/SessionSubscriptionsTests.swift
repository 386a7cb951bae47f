import Testing
@testable import TetherMQTT

@Suite("A session's subscriptions")
struct SessionSubscriptionsTests {
    @Test("add, replace and remove by filter, below and past the list's limit", arguments: [3, SessionSubscriptions.listLimit + 5])
    func byFilter(count: Int) {
        var subscriptions = SessionSubscriptions()
        for index in 0..<count {
            let existed = subscriptions.update(MQTTTopicSubscription(filter: "devices/\(index)/#", qos: .atMostOnce), identifier: nil)
            #expect(!existed)
        }
        let replaced = subscriptions.update(MQTTTopicSubscription(filter: "devices/1/#", qos: .exactlyOnce), identifier: 9)
        #expect(replaced)
        #expect(subscriptions.count == count)
        #expect(Set(subscriptions.filters) == Set((0..<count).map { "devices/\($0)/#" }))
        let one = subscriptions.all.first { $0.options.filter == "devices/1/#" }
        #expect(one?.options.qos == .exactlyOnce && one?.identifier == 9)

        let removed = subscriptions.remove("devices/0/#")
        let again = subscriptions.remove("devices/0/#")
        #expect(removed && !again)
        #expect(subscriptions.count == count - 1)
        #expect(!subscriptions.filters.contains("devices/0/#"))
    }
}

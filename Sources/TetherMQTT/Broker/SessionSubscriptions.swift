/// A session's subscriptions, by filter (with its `$share/…` prefix). Most clients have a
/// handful (a gateway's devices none: theirs are templates), kept as a short array searched in order: a
/// dictionary that size costs three times the memory. Past `listLimit` a dictionary takes over,
/// so that a client with thousands of subscriptions stays fast.
struct SessionSubscriptions {
    struct Subscription {
        var options: MQTTTopicSubscription
        var identifier: Int?
    }

    private enum Storage {
        case list([Subscription])
        case table([String: Subscription])
    }

    static var listLimit: Int { 16 }
    private var storage = Storage.list([])

    var count: Int {
        switch storage {
        case .list(let list): list.count
        case .table(let table): table.count
        }
    }

    var all: [Subscription] {
        switch storage {
        case .list(let list): list
        case .table(let table): Array(table.values)
        }
    }

    var filters: [String] { all.map(\.options.filter) }

    /// Adds or replaces the subscription to `options.filter`; returns whether one existed.
    @discardableResult
    mutating func update(_ options: MQTTTopicSubscription, identifier: Int?) -> Bool {
        let subscription = Subscription(options: options, identifier: identifier)
        switch storage {
        case .list(var list):
            // Let go of the stored copy first, so that the array is changed in place.
            storage = .list([])
            defer { storage = list.count > Self.listLimit ? .table(Dictionary(list.map { ($0.options.filter, $0) }, uniquingKeysWith: { $1 })) : .list(list) }
            if let index = list.firstIndex(where: { $0.options.filter == options.filter }) {
                list[index] = subscription
                return true
            }
            list.append(subscription)
            return false
        case .table(var table):
            storage = .list([])
            defer { storage = .table(table) }
            return table.updateValue(subscription, forKey: options.filter) != nil
        }
    }

    /// Removes the subscription to `filter`; returns whether there was one.
    mutating func remove(_ filter: String) -> Bool {
        switch storage {
        case .list(var list):
            storage = .list([])
            defer { storage = .list(list) }
            guard let index = list.firstIndex(where: { $0.options.filter == filter }) else { return false }
            list.remove(at: index)
            return true
        case .table(var table):
            storage = .list([])
            defer { storage = .table(table) }
            return table.removeValue(forKey: filter) != nil
        }
    }
}

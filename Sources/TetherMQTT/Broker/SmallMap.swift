/// A map that holds its first entry inline, its first few in a short array, and only more than
/// that in a dictionary: the topic tree's nodes almost all have one child or one subscriber, a few
/// have two or three, and a gateway has tens of thousands of them (a dictionary of two entries
/// costs twice the array).
struct SmallMap<Key: Hashable, Value> {
    private enum Storage {
        case empty
        case one(Key, Value)
        case few([(key: Key, value: Value)])
        case many([Key: Value])
    }

    /// The most entries kept in an array, searched in order.
    static var fewLimit: Int { 8 }
    private var storage = Storage.empty

    init() {}

    var isEmpty: Bool {
        if case .empty = storage { true } else { false }
    }

    var count: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .few(let entries): entries.count
        case .many(let entries): entries.count
        }
    }

    subscript(key: Key) -> Value? {
        switch storage {
        case .empty: nil
        case .one(let existing, let value): existing == key ? value : nil
        case .few(let entries): entries.first { $0.key == key }?.value
        case .many(let entries): entries[key]
        }
    }

    /// Sets the value for `key`; returns the value it replaced, if any.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        switch storage {
        case .empty:
            storage = .one(key, value)
            return nil
        case .one(let existing, let old):
            if existing == key {
                storage = .one(key, value)
                return old
            }
            storage = .few([(existing, old), (key, value)])
            return nil
        case .few(var entries):
            // Let go of the stored copy first, so that the array is changed in place.
            storage = .empty
            if let index = entries.firstIndex(where: { $0.key == key }) {
                let old = entries[index].value
                entries[index].value = value
                storage = .few(entries)
                return old
            }
            entries.append((key, value))
            storage = entries.count > Self.fewLimit ? .many(Dictionary(entries, uniquingKeysWith: { $1 })) : .few(entries)
            return nil
        case .many(var entries):
            storage = .empty
            let old = entries.updateValue(value, forKey: key)
            storage = .many(entries)
            return old
        }
    }

    /// Removes `key`; returns its value, if it was there.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        switch storage {
        case .empty:
            return nil
        case .one(let existing, let value):
            guard existing == key else { return nil }
            storage = .empty
            return value
        case .few(var entries):
            storage = .empty
            defer { storage = Self.compacted(entries) }
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            return entries.remove(at: index).value
        case .many(var entries):
            storage = .empty
            let old = entries.removeValue(forKey: key)
            storage = entries.count > Self.fewLimit ? .many(entries) : Self.compacted(entries.map { ($0.key, $0.value) })
            return old
        }
    }

    /// The smallest storage for what remains: a node whose subscribers left keeps no array or
    /// dictionary.
    private static func compacted(_ entries: [(key: Key, value: Value)]) -> Storage {
        switch entries.count {
        case 0: .empty
        case 1: .one(entries[0].key, entries[0].value)
        default: .few(entries)
        }
    }

    func forEach(_ body: (Key, Value) -> Void) {
        switch storage {
        case .empty: break
        case .one(let key, let value): body(key, value)
        case .few(let entries): for (key, value) in entries { body(key, value) }
        case .many(let entries): for (key, value) in entries { body(key, value) }
        }
    }
}

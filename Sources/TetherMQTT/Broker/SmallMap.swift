/// A map that holds its first entry inline and allocates a dictionary only for a second: the
/// topic tree's nodes almost all have one child or one subscriber, and a gateway has tens of
/// thousands of them.
struct SmallMap<Key: Hashable, Value> {
    private enum Storage {
        case empty
        case one(Key, Value)
        case many([Key: Value])
    }

    private var storage = Storage.empty

    init() {}

    var isEmpty: Bool {
        if case .empty = storage { true } else { false }
    }

    var count: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let entries): entries.count
        }
    }

    subscript(key: Key) -> Value? {
        switch storage {
        case .empty: nil
        case .one(let existing, let value): existing == key ? value : nil
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
            storage = .many([existing: old, key: value])
            return nil
        case .many(var entries):
            // Let go of the stored copy first, so that the dictionary is updated in place.
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
        case .many(var entries):
            storage = .empty
            let old = entries.removeValue(forKey: key)
            if entries.count == 1, let (remaining, value) = entries.first {
                // Back inline: a node whose subscribers left does not keep a dictionary.
                storage = .one(remaining, value)
            } else if !entries.isEmpty {
                storage = .many(entries)
            }
            return old
        }
    }

    func forEach(_ body: (Key, Value) -> Void) {
        switch storage {
        case .empty: break
        case .one(let key, let value): body(key, value)
        case .many(let entries): for (key, value) in entries { body(key, value) }
        }
    }
}

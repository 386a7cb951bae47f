/// Who a connected client is, as the authentication hook decided.
public struct MQTTPrincipal: Hashable, Sendable {
    /// The session's identity. The broker keys the session by the client id the client sent,
    /// unless authentication returns a different non-empty one: a gateway that keys sessions by
    /// device makes a device's second connection take over its first, whatever client id each
    /// carried.
    public var clientID: String
    /// The user name the client presented, if the authentication hook kept it.
    public var username: String?
    /// Whatever the embedder wants to remember (a device's id, a user id…).
    public var attributes: MQTTPrincipalAttributes

    /// Builds a principal; from authentication, an empty `clientID` keeps the one the client sent.
    public init(clientID: String, username: String? = nil, attributes: MQTTPrincipalAttributes = [:]) {
        self.clientID = clientID
        self.username = username
        self.attributes = attributes
    }
}

/// A principal's attributes: a few names and values, looked up by name. A principal lives as
/// long as its connection, so with many connections its size counts: a dictionary of five
/// entries took 336 bytes per connection, these take 32 bytes and 32 per entry, in one
/// allocation (none when empty). Equality and hashing ignore the order of the entries.
public struct MQTTPrincipalAttributes: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
    /// Names and values alternately, each name once.
    private var storage: [String]

    /// No attributes.
    public init() { storage = [] }

    /// The entries given; of two with the same name, the last.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        reserveCapacity(elements.count)
        for (name, value) in elements { self[name] = value }
    }

    /// Room for `count` entries in all, so that adding them does not grow the storage twice.
    public mutating func reserveCapacity(_ count: Int) { storage.reserveCapacity(count * 2) }

    /// The number of entries.
    public var count: Int { storage.count / 2 }

    /// Whether there are none.
    public var isEmpty: Bool { storage.isEmpty }

    /// The value named `name`; setting nil removes it.
    public subscript(name: String) -> String? {
        get { valueIndex(of: name).map { storage[$0] } }
        set {
            switch (valueIndex(of: name), newValue) {
            case (let index?, let value?): storage[index] = value
            case (let index?, nil): storage.removeSubrange(index - 1...index)
            case (nil, let value?): storage.append(contentsOf: [name, value])
            case (nil, nil): break
            }
        }
    }

    private func valueIndex(of name: String) -> Int? {
        var index = 0
        while index < storage.count {
            if storage[index] == name { return index + 1 }
            index += 2
        }
        return nil
    }

    public struct Iterator: IteratorProtocol {
        fileprivate let storage: [String]
        fileprivate var index = 0

        public mutating func next() -> (name: String, value: String)? {
            guard index < storage.count else { return nil }
            defer { index += 2 }
            return (storage[index], storage[index + 1])
        }
    }

    public func makeIterator() -> Iterator { Iterator(storage: storage) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.name] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // A sum of the entries' own hashes does not depend on their order.
        var sum = 0
        for (name, value) in self {
            var entry = Hasher()
            entry.combine(name)
            entry.combine(value)
            sum &+= entry.finalize()
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}

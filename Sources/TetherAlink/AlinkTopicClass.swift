public import TetherCore
import TetherMQTT

/// A product's custom topic class (Aliyun's "Topic 类"): a topic under each device's
/// `/{pk}/{dn}/user/` and what the device may do with it: publish (`pub`: device to cloud),
/// subscribe (`sub`: cloud to device) or both (`pub/sub`).
public struct AlinkTopicClass: Hashable, Sendable, CustomStringConvertible {
    /// What a device may do with the topics of a class.
    public enum Operation: String, Sendable, CaseIterable {
        case publish = "pub"
        case subscribe = "sub"
        case publishAndSubscribe = "pub/sub"

        public var allowsPublish: Bool { self != .subscribe }
        public var allowsSubscribe: Bool { self != .publish }
    }

    /// The part after `/{pk}/{dn}/user/`: levels of letters, digits and `_-.`, no wildcards.
    public var path: String
    public var operation: Operation

    /// The longest path accepted.
    public static let maximumPathLength = 128

    /// A class; throws `invalidArgument` for a path that is empty, too long, has empty levels,
    /// wildcards or other characters.
    public init(path: String, operation: Operation) throws(TetherError) {
        let levels = path.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...Self.maximumPathLength).contains(path.utf8.count),
            levels.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Self.isPathCharacter) })
        else {
            throw TetherError(
                .invalidArgument,
                "a topic class is 1 to \(Self.maximumPathLength) characters of levels of letters, digits and _-. separated by / (got \"\(path.prefix(140))\")")
        }
        self.path = path
        self.operation = operation
    }

    /// Reads `PATH:OPERATION` (`update:pub`, `get:sub`, `cmd/reset:pub/sub`).
    public init(parsing text: String) throws(TetherError) {
        guard let colon = text.firstIndex(of: ":"), let operation = Operation(rawValue: String(text[text.index(after: colon)...])) else {
            throw TetherError(.invalidArgument, "a topic class is PATH:pub, PATH:sub or PATH:pub/sub (got \"\(text.prefix(140))\")")
        }
        try self.init(path: String(text[..<colon]), operation: operation)
    }

    /// `PATH:OPERATION`, as ``init(parsing:)`` reads it.
    public var description: String { "\(path):\(operation.rawValue)" }

    /// Aliyun's classes of every new product: `update` and `update/error` (pub), `get` (sub).
    public static let defaults: [AlinkTopicClass] = [
        AlinkTopicClass(uncheckedPath: "update", operation: .publish), AlinkTopicClass(uncheckedPath: "update/error", operation: .publish),
        AlinkTopicClass(uncheckedPath: "get", operation: .subscribe),
    ]

    private init(uncheckedPath path: String, operation: Operation) {
        self.path = path
        self.operation = operation
    }

    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        case UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."): return true
        default: return false
        }
    }
}

/// The topic classes of a product, and what they let its devices do.
public struct AlinkTopicClasses: Hashable, Sendable {
    public var classes: [AlinkTopicClass]

    /// At most this many classes per product (Aliyun's limit is 50).
    public static let maximumCount = 50

    /// Aliyun's defaults (``AlinkTopicClass/defaults``).
    public static let standard = AlinkTopicClasses(unchecked: AlinkTopicClass.defaults)
    /// No custom topics at all.
    public static let none = AlinkTopicClasses(unchecked: [])

    private init(unchecked classes: [AlinkTopicClass]) { self.classes = classes }

    public init(_ classes: [AlinkTopicClass]) throws(TetherError) {
        guard classes.count <= Self.maximumCount else { throw TetherError(.invalidArgument, "a product has at most \(Self.maximumCount) topic classes") }
        guard Set(classes.map(\.path)).count == classes.count else { throw TetherError(.invalidArgument, "each topic class path is named once") }
        self.classes = classes
    }

    /// A device may publish on `/{pk}/{dn}/user/{path}`.
    public func allowsPublish(path: Substring) -> Bool {
        classes.contains { $0.operation.allowsPublish && $0.path == path }
    }

    /// A device may receive `/{pk}/{dn}/user/{path}`.
    public func allowsDelivery(path: Substring) -> Bool {
        classes.contains { $0.operation.allowsSubscribe && $0.path == path }
    }

    /// A device may subscribe to `/{pk}/{dn}/user/{filter}`: the filter names or matches at
    /// least one class it may receive (what it then receives is checked topic by topic).
    public func allowsSubscribe(filter: Substring) -> Bool {
        let filter = String(filter)
        return classes.contains { $0.operation.allowsSubscribe && MQTTTopic.matches(filter: filter, topic: $0.path) }
    }

    /// `update:pub,get:sub`: how the cloud keeps them beside a connection.
    public var encoded: String { classes.map(\.description).joined(separator: ",") }

    /// Reads ``encoded``.
    public init(encoded: String) throws(TetherError) {
        var classes: [AlinkTopicClass] = []
        for text in encoded.split(separator: ",") { classes.append(try AlinkTopicClass(parsing: String(text))) }
        try self.init(classes)
    }
}

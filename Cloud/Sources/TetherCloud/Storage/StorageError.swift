/// Failures of the storage layer. A constraint violation is reported separately because callers
/// turn it into "already exists" answers (a username taken, a MAC already registered).
public struct StorageError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        case invalidURL
        case connectionFailed
        case uniqueViolation
        case queryFailed
        case unexpectedValue
        case migrationFailed
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    static func unexpectedValue(column: String) -> StorageError {
        StorageError(.unexpectedValue, "column \(column) is missing or has an unexpected type")
    }
}

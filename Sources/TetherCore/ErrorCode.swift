/// A stable error code of an error domain: `rawValue` and `name` are part of the public API
/// and never reused. `TetherError.Code` and `MQTTError.Code` are this type.
public struct ErrorCode<Domain>: Hashable, Sendable, CustomStringConvertible {
    /// The stable number of the code; equality and hashing use it alone.
    public let rawValue: Int
    /// The stable name of the code, spelled like its constant (`invalidModel`).
    public let name: String

    /// For error domains defining their codes; `rawValue` identifies the code.
    public init(_ rawValue: Int, _ name: String) {
        self.rawValue = rawValue
        self.name = name
    }

    public var description: String { "\(name) (\(rawValue))" }

    public static func == (lhs: ErrorCode, rhs: ErrorCode) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

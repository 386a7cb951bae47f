/// Why text is not an M2M frame. Safe to send back to whoever sent it (`s2c_invalid_msg` 9015).
public struct M2MFrameError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// Not one JSON object, or longer than the limit.
        case notAFrame
        /// A `cmd` this protocol does not have.
        case unknownCommand
        /// A field the command needs is missing.
        case missingField
        /// A field has the wrong type (or an impossible value: a byte above 255).
        case wrongType
    }

    public var kind: Kind
    /// What went wrong, naming the command and the field.
    public var message: String
    /// The `req_sn` of the frame, when it could be read: the refusal answers it.
    public var sequence: M2MSequence?

    public init(_ kind: Kind, _ message: String, sequence: M2MSequence? = nil) {
        self.kind = kind
        self.message = message
        self.sequence = sequence
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

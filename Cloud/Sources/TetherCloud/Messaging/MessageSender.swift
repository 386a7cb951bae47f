/// A text message or e-mail the cloud sends to a person: a verification code, a confirmation
/// or password-reset link.
public struct OutgoingMessage: Sendable, Equatable {
    public enum Channel: String, Sendable {
        case sms
        case email
    }

    public var channel: Channel
    public var recipient: String
    public var subject: String
    public var body: String

    public init(channel: Channel, recipient: String, subject: String, body: String) {
        self.channel = channel
        self.recipient = recipient
        self.subject = subject
        self.body = body
    }
}

/// Where SMS and e-mail go. The default, ``OutboxSender``, keeps them in the database for
/// `tether-cloud admin outbox`, so a self-hoster needs no SMS provider.
public protocol MessageSender: Sendable {
    func send(_ message: OutgoingMessage) async throws
}

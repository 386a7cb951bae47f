/// Writes each message to the `outbox` table instead of sending it.
public struct OutboxSender: MessageSender {
    let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    public func send(_ message: OutgoingMessage) async throws {
        try await database.query(
            "INSERT INTO outbox (channel, recipient, subject, body, created_at) VALUES ($1, $2, $3, $4, $5)",
            .text(message.channel.rawValue), .text(message.recipient), .text(message.subject),
            .text(message.body), .int(Clock.unixNow())
        )
    }
}

/// One message kept in the outbox.
public struct OutboxEntry: Sendable, Equatable {
    public var id: Int64
    public var message: OutgoingMessage
    public var createdAt: Int64
}

extension OutboxSender {
    /// The newest messages first.
    public static func entries(in database: any SQLDatabase, limit: Int = 100) async throws(StorageError) -> [OutboxEntry] {
        try await database.query(
            "SELECT id, channel, recipient, subject, body, created_at FROM outbox ORDER BY id DESC LIMIT $1",
            .int(Int64(limit))
        ).map { row throws(StorageError) in
            OutboxEntry(
                id: try row.int("id"),
                message: OutgoingMessage(
                    channel: OutgoingMessage.Channel(rawValue: try row.text("channel")) ?? .sms,
                    recipient: try row.text("recipient"),
                    subject: try row.text("subject"),
                    body: try row.text("body")
                ),
                createdAt: try row.int("created_at")
            )
        }
    }
}

/// A persistent session as stored: what a broker needs to resume it after a restart.
public struct MQTTStoredSession: Hashable, Sendable {
    /// The key of the session: the client identifier the broker stored it under.
    public var clientID: String
    /// The protocol level the session's client connected with.
    public var version: MQTTVersion
    /// The session's subscriptions, with their QoS and options.
    public var subscriptions: [MQTTTopicSubscription]
    /// Subscription identifiers by filter (v5).
    public var subscriptionIdentifiers: [String: Int]
    /// Seconds the session outlives its connection; nil: until the broker forgets it (3.1.1).
    public var expiryInterval: UInt32?
    /// Messages not yet delivered or not yet acknowledged, oldest first.
    public var pendingMessages: [MQTTMessage]
    /// The user the session belongs to (as authentication named it): only that user's clients
    /// use its client id.
    public var username: String?

    /// Builds a stored session from its parts, as given.
    public init(
        clientID: String, version: MQTTVersion, subscriptions: [MQTTTopicSubscription], subscriptionIdentifiers: [String: Int] = [:], expiryInterval: UInt32?,
        pendingMessages: [MQTTMessage], username: String? = nil
    ) {
        self.username = username
        self.clientID = clientID
        self.version = version
        self.subscriptions = subscriptions
        self.subscriptionIdentifiers = subscriptionIdentifiers
        self.expiryInterval = expiryInterval
        self.pendingMessages = pendingMessages
    }
}

/// Where a broker keeps what must survive a restart: persistent sessions (with their undelivered
/// and unacknowledged messages) and retained messages. The default keeps nothing beyond memory.
///
/// Calls happen as state changes, outside the broker's locks; implementations must be quick or
/// hand the work to a queue of their own.
public protocol MQTTBrokerPersistence: Sendable {
    /// Everything stored, read once when the broker starts.
    func load() async throws -> (sessions: [MQTTStoredSession], retained: [MQTTMessage])
    /// A persistent session changed (subscriptions, pending messages) or its client disconnected.
    func saveSession(_ session: MQTTStoredSession)
    /// A session ended (clean start, expiry, or a client that connected with a clean session).
    func deleteSession(clientID: String)
    /// A retained message was set (`message`) or cleared (`nil`).
    func saveRetained(topic: String, message: MQTTMessage?)
}

/// Keeps nothing: sessions and retained messages live as long as the broker process.
public struct MQTTNoPersistence: MQTTBrokerPersistence {
    /// Builds the no-op store.
    public init() {}
    /// Returns nothing: the broker starts without sessions or retained messages.
    public func load() async throws -> (sessions: [MQTTStoredSession], retained: [MQTTMessage]) { ([], []) }
    /// Discards the session.
    public func saveSession(_ session: MQTTStoredSession) {}
    /// Does nothing: nothing was stored.
    public func deleteSession(clientID: String) {}
    /// Discards the retained message.
    public func saveRetained(topic: String, message: MQTTMessage?) {}
}

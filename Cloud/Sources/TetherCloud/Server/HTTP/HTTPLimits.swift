/// The HTTP server's defences against clients that are slow on purpose or take more than
/// their share: every connection must make progress, and one source holds a bounded number.
public struct HTTPLimits: Sendable {
    /// A connection's first request head (request line and headers) must arrive within this.
    public var headerTimeout: Duration = .seconds(10)
    /// A request's body must arrive within this after its head.
    public var bodyTimeout: Duration = .seconds(30)
    /// A connection with nothing in progress closes after this; the next request's head
    /// must also arrive within it.
    public var idleTimeout: Duration = .seconds(30)
    /// A WebSocket (`/ws/app/v1`) must log in within this after it opens.
    public var webSocketLoginTimeout: Duration = .seconds(30)
    /// The largest request head (request line and headers, bytes).
    public var maximumHeaderSize = 16 * 1024
    /// Connections open at once from one source (an IPv6 source is its /64); trusted proxies
    /// are not limited.
    public var maximumConnectionsPerSource = 256

    public init() {}
}

extension TetherClient {
    /// How a ``TetherClient`` works. Every field has a default.
    public struct Configuration: Sendable {
        /// Product models the client knows, by product key: it needs one to read and write a
        /// device's data points.
        public var products: [ThingModel]
        public var lan: LANConfiguration

        public init(products: [ThingModel] = [], lan: LANConfiguration = .init()) {
            self.products = products
            self.lan = lan
        }
    }
}

/// How the client finds and talks to devices on the LAN. Defaults are those of the Gizwits SDK
/// and GAgent.
public struct LANConfiguration: Sendable {
    /// Whether the client looks for devices on its own.
    public var discoveryEnabled: Bool
    /// Where discovery requests go: the broadcast address by default; a subnet broadcast, or
    /// unicast addresses (devices on 127.0.0.x in tests and demos), work too.
    public var discoveryTargets: [LANEndpoint]
    /// Time between discovery rounds.
    public var discoveryInterval: Duration
    /// A device that has not answered discovery for this long is no longer on the LAN.
    public var presenceTimeout: Duration
    /// The TCP control port of discovered devices.
    public var tcpPort: Int
    public var connectTimeout: Duration
    /// How long a request (login, write with sn, read) waits for the device's answer.
    public var requestTimeout: Duration
    /// Time between heartbeats on a subscribed device's connection (the Gizwits app: about 4 s;
    /// GAgent drops a silent client after 14 s).
    public var heartbeatInterval: Duration
    /// A heartbeat unanswered for this long means the link is dead: the client reconnects.
    public var heartbeatTimeout: Duration
    /// Reconnection delays: `initial`, doubling up to `maximum`, each with ±20 % jitter.
    public var reconnectDelay: (initial: Duration, maximum: Duration)
    /// Largest frame accepted from a device.
    public var maximumFrameLength: Int

    public init(
        discoveryEnabled: Bool = true,
        discoveryTargets: [LANEndpoint] = [.broadcast],
        discoveryInterval: Duration = .seconds(1),
        presenceTimeout: Duration = .seconds(5),
        tcpPort: Int = 12416,
        connectTimeout: Duration = .seconds(3),
        requestTimeout: Duration = .seconds(5),
        heartbeatInterval: Duration = .seconds(4),
        heartbeatTimeout: Duration = .seconds(3),
        reconnectDelay: (initial: Duration, maximum: Duration) = (.milliseconds(500), .seconds(15)),
        maximumFrameLength: Int = GizwitsLANFrame.defaultMaximumFrameLength
    ) {
        self.discoveryEnabled = discoveryEnabled
        self.discoveryTargets = discoveryTargets
        self.discoveryInterval = discoveryInterval
        self.presenceTimeout = presenceTimeout
        self.tcpPort = tcpPort
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.reconnectDelay = reconnectDelay
        self.maximumFrameLength = maximumFrameLength
    }

    var clientConfiguration: GizwitsLANClient.Configuration {
        .init(connectTimeout: connectTimeout, requestTimeout: requestTimeout, maximumFrameLength: maximumFrameLength)
    }

    /// The delay before reconnection attempt `attempt` (0-based).
    func reconnectDelay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        var delay = reconnectDelay.initial
        for _ in 0..<min(attempt, 30) where delay < reconnectDelay.maximum { delay *= 2 }
        delay = min(delay, reconnectDelay.maximum)
        return delay * Double.random(in: 0.8...1.2, using: &generator)
    }
}

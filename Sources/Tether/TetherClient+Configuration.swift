#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import TetherCloudClient
public import TetherCore

extension TetherClient {
    /// How a ``TetherClient`` works. Every field has a default.
    public struct Configuration: Sendable {
        /// Product models the client knows, by product key: it needs one to read and write a
        /// device's data points.
        public var products: [ThingModel]
        /// How the client finds and talks to devices on the LAN.
        public var lan: LANConfiguration
        /// The cloud, for accounts and devices beyond the LAN; nil for a LAN-only client.
        public var cloud: CloudOptions?
        /// Tuya devices on the LAN: local keys, listening for announcements.
        public var tuya: TuyaConfiguration

        /// A configuration; every argument has a default (no products, LAN discovery by broadcast,
        /// no cloud, Tuya devices only when added by address).
        public init(products: [ThingModel] = [], lan: LANConfiguration = .init(), cloud: CloudOptions? = nil, tuya: TuyaConfiguration = .init()) {
            self.products = products
            self.lan = lan
            self.cloud = cloud
            self.tuya = tuya
        }
    }

    /// Which cloud the client uses, as which app, and where the user's session is kept.
    public struct CloudOptions: Sendable {
        /// The cloud's address (`CloudEndpoint(url: "https://…")`).
        public var endpoint: CloudEndpoint
        /// The app ID the cloud gave the app.
        public var appID: String
        /// Needed only for SMS codes. Never logged.
        public var appSecret: String?
        /// Where the session is kept between launches (a file by default).
        public var sessionStore: any SessionStore
        /// A session that expires sooner than this is renewed on its next use.
        public var renewBefore: Duration
        /// How long a request to the cloud may take.
        public var requestTimeout: Duration
        /// How often the bound devices are read again (they are also read at every login).
        public var bindingsRefreshInterval: Duration
        /// Delays between attempts to reconnect the real-time connection.
        public var reconnect: ReconnectPolicy
        /// Whether the model of a product the configuration lacks is fetched from the cloud
        /// (`/app/datapoint`) when a device of that product is found or bound.
        public var fetchesProductModels: Bool

        /// Cloud options; only the endpoint and app ID are required. Without `sessionStore` the
        /// session is kept in `~/.tether/session-APPID.json` (mode 0600).
        public init(
            endpoint: CloudEndpoint,
            appID: String,
            appSecret: String? = nil,
            sessionStore: (any SessionStore)? = nil,
            renewBefore: Duration = .seconds(24 * 3600),
            requestTimeout: Duration = .seconds(15),
            bindingsRefreshInterval: Duration = .seconds(60),
            reconnect: ReconnectPolicy = ReconnectPolicy(),
            fetchesProductModels: Bool = true
        ) {
            self.endpoint = endpoint
            self.appID = appID
            self.appSecret = appSecret
            self.sessionStore = sessionStore ?? FileSessionStore(path: Self.defaultSessionPath(appID: appID))
            self.renewBefore = renewBefore
            self.requestTimeout = requestTimeout
            self.bindingsRefreshInterval = bindingsRefreshInterval
            self.reconnect = reconnect
            self.fetchesProductModels = fetchesProductModels
        }

        var realtimeConfiguration: CloudRealtimeConfiguration {
            CloudRealtimeConfiguration(
                endpoint: endpoint, appID: appID, requestTimeout: requestTimeout,
                reconnect: reconnect
            )
        }

        /// `$HOME/.tether/session-APPID.json` (the temporary directory without a home).
        static func defaultSessionPath(appID: String) -> String {
            let home = ProcessInfo.processInfo.environment["HOME"] ?? FileManager.default.temporaryDirectory.path
            return "\(home)/.tether/session-\(appID).json"
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
    /// How long a TCP connection to a device may take to open.
    public var connectTimeout: Duration
    /// How long a request (login, write with sn, read) waits for the device's answer.
    public var requestTimeout: Duration
    /// Time between heartbeats on a subscribed device's connection (the Gizwits app: about 4 s;
    /// GAgent drops a silent client after 14 s).
    public var heartbeatInterval: Duration
    /// A heartbeat unanswered for this long means the link is dead: the client reconnects.
    public var heartbeatTimeout: Duration
    /// Delays between attempts to connect to a subscribed device again (0.5 s, doubling up to 15 s).
    public var reconnect: ReconnectPolicy
    /// Largest frame accepted from a device.
    public var maximumFrameLength: Int

    /// A LAN configuration; every value has the Gizwits SDK's and GAgent's default.
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
        reconnect: ReconnectPolicy = ReconnectPolicy(maximumDelay: .seconds(15)),
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
        self.reconnect = reconnect
        self.maximumFrameLength = maximumFrameLength
    }

    var clientConfiguration: GizwitsLANClient.Configuration {
        .init(connectTimeout: connectTimeout, requestTimeout: requestTimeout, maximumFrameLength: maximumFrameLength)
    }

}

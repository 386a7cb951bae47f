public import TetherGizwitsLAN

/// How a virtual device presents itself on the LAN. Defaults are GAgent's.
public struct LANDeviceConfiguration: Sendable {
    /// Address both sockets bind to.
    public var host: String
    /// UDP port for discovery and SoftAP onboarding (GAgent: 12414).
    public var udpPort: Int
    /// TCP control port (GAgent: 12416).
    public var tcpPort: Int
    /// Where the start-up announcement (0x0005) and the configuration-success announcement
    /// (0x0019) go. Nil sends none. See ``defaultAnnouncementTarget(for:)``.
    public var announcementTarget: (host: String, port: Int)?
    /// GAgent sends 30 announcements, one a second.
    public var announcementCount: Int
    /// Pause after each announcement (GAgent: 1 s).
    public var announcementInterval: Duration
    /// A client that sends nothing for this long is dropped (GAgent: 14 s in station mode).
    public var idleTimeout: Duration
    /// GAgent accepts 8 clients and closes the 9th at once.
    public var maximumClients: Int
    /// What `0x000C` answers.
    public var hotspots: [GizwitsHotspot]
    /// Largest frame accepted from a client.
    public var maximumFrameLength: Int
    /// How long binding is tried again when a port is taken: for a device put back on ports it
    /// just left, which a client reconnecting meanwhile can hold for a moment (on loopback it may
    /// be given that very port as its own). Zero: one attempt.
    public var bindRetry: Duration
    /// The network SoftAP onboarding joins (`0x0001`): GAgent gives no answer about the join, so
    /// a join that fails leaves the device in onboarding mode without announcing itself.
    public var router: any WiFiStation
    /// Where the device in SoftAP mode serves `web_config.cgi` (GAgent: 80; 0 lets the system
    /// choose); nil serves none.
    public var webConfigPort: Int?

    /// A configuration with GAgent's defaults. An omitted (or nil) `announcementTarget` means
    /// ``defaultAnnouncementTarget(for:)`` of `host`; pass `.some(nil)` to send no announcements.
    public init(
        host: String = "0.0.0.0",
        udpPort: Int = 12414,
        tcpPort: Int = 12416,
        announcementTarget: (host: String, port: Int)?? = .none,
        announcementCount: Int = 30,
        announcementInterval: Duration = .seconds(1),
        idleTimeout: Duration = .seconds(14),
        maximumClients: Int = 8,
        hotspots: [GizwitsHotspot] = [GizwitsHotspot(ssid: "TetherHome", rssi: 72), GizwitsHotspot(ssid: "TetherGuest", rssi: 41)],
        maximumFrameLength: Int = 4096,
        bindRetry: Duration = .zero,
        router: any WiFiStation = SimulatedRouter(),
        webConfigPort: Int? = nil
    ) {
        self.host = host
        self.udpPort = udpPort
        self.tcpPort = tcpPort
        self.announcementTarget = announcementTarget ?? Self.defaultAnnouncementTarget(for: host)
        self.announcementCount = announcementCount
        self.announcementInterval = announcementInterval
        self.idleTimeout = idleTimeout
        self.maximumClients = maximumClients
        self.hotspots = hotspots
        self.maximumFrameLength = maximumFrameLength
        self.bindRetry = bindRetry
        self.router = router
        self.webConfigPort = webConfigPort
    }

    /// The broadcast address on UDP 2415, as GAgent does; a device bound to a loopback address
    /// announces to 127.0.0.1:2415 instead, because loopback has no broadcast.
    public static func defaultAnnouncementTarget(for host: String) -> (host: String, port: Int) {
        if host.hasPrefix("127.") || host == "::1" || host == "localhost" { return ("127.0.0.1", 2415) }
        return ("255.255.255.255", 2415)
    }
}

/// The addresses a running device listens on (useful when ports were 0, chosen by the system).
public struct LANDeviceAddresses: Hashable, Sendable {
    /// The address both sockets are bound to, as configured.
    public var host: String
    /// The UDP port actually bound (discovery and SoftAP onboarding).
    public var udpPort: Int
    /// The TCP port actually bound (the control channel).
    public var tcpPort: Int
    /// The HTTP port of `web_config.cgi`, when served.
    public var webConfigPort: Int?
}

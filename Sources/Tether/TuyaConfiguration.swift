/// How the client finds and talks to Tuya devices on the LAN (local protocol 3.1 to 3.5).
///
/// Devices added by address (``TetherClient/tuyaDevice(host:port:id:localKey:version:model:)``)
/// need nothing here. Listening for announcements is off by default: it binds UDP 6666 and 6667
/// (it sends nothing), which only one program on a machine can usually do.
public struct TuyaConfiguration: Sendable {
    /// Whether the client listens for devices' announcements and lists the devices it hears.
    public var listensForAnnouncements: Bool
    /// The address to listen on.
    public var announcementHost: String
    /// The UDP ports: 6666 (3.1, plaintext) and 6667 (3.2 and later).
    public var announcementPorts: [Int]
    /// Local keys of devices the app knows, by device id (from the vendor's cloud, a pairing, or
    /// the user). A device heard without one is listed but cannot be subscribed to until
    /// ``Device/setTuyaLocalKey(_:)`` gives it one.
    public var localKeys: [String: TuyaLocalKey]
    /// The TCP port of announced devices.
    public var tcpPort: Int
    /// Devices announce about every 5 s: one not heard for this long is no longer on the LAN.
    public var presenceTimeout: Duration
    /// Time between heartbeats on a subscribed device's connection (devices drop a client that
    /// stays silent for about 30 s).
    public var heartbeatInterval: Duration
    /// How long connecting (and on 3.4/3.5 the session key) and each request may take. A device
    /// that does not answer in time is taken as gone: the client reconnects.
    public var requestTimeout: Duration

    public init(
        listensForAnnouncements: Bool = false, announcementHost: String = "0.0.0.0", announcementPorts: [Int] = [6666, 6667],
        localKeys: [String: TuyaLocalKey] = [:], tcpPort: Int = 6668, presenceTimeout: Duration = .seconds(20), heartbeatInterval: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(5)
    ) {
        self.listensForAnnouncements = listensForAnnouncements
        self.announcementHost = announcementHost
        self.announcementPorts = announcementPorts
        self.localKeys = localKeys
        self.tcpPort = tcpPort
        self.presenceTimeout = presenceTimeout
        self.heartbeatInterval = heartbeatInterval
        self.requestTimeout = requestTimeout
    }

    var sessionConfiguration: TuyaLANSession.Configuration {
        .init(connectTimeout: requestTimeout, requestTimeout: requestTimeout)
    }
}

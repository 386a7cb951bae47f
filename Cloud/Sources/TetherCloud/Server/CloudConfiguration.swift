/// How `tether-cloud serve` runs. Every field has a default, so the server starts with no set-up.
public struct CloudConfiguration: Sendable {
    /// The address the HTTP API listens on. Loopback by default; `0.0.0.0` to serve a network.
    public var bindAddress: String = "127.0.0.1"
    public var httpPort: Int = 8080
    public var database: DatabaseURL = .default
    /// The base URL users' browsers reach this server at, for links in e-mails.
    /// Default: `http://<bindAddress>:<httpPort>`.
    public var publicURL: String?
    /// What device objects tell apps and devices about the real-time side. Default: this
    /// server's address, with the WebSocket port being the HTTP port.
    public var m2m: M2MEndpoint?
    public var accounts = AccountPolicy()
    /// Rate limits of registrations, passcode guesses and password guesses.
    public var abuse = AbusePolicy()
    /// Reverse proxies (their IP addresses) whose `X-Forwarded-For` names the client; every
    /// other peer is the client itself.
    public var trustedProxies: Set<String> = []
    /// Send e-mail through this SMTP server; without it, e-mail waits in the outbox like SMS.
    public var smtp: SMTPConfiguration?
    /// Where `GET /metrics` (Prometheus) listens, apart from the API; nil serves no metrics.
    /// `tether-cloud serve` listens on 127.0.0.1:9464 unless told otherwise (`--metrics-bind`).
    public var metricsAddress: (host: String, port: Int)?
    /// The HTTP server's limits against slow and greedy clients.
    public var http = HTTPLimits()
    /// How long a LAN grant lasts (README, "LAN grants"): the longest a revoked user may go on
    /// logging in on the LAN. 60 s to 7 days.
    public var lanGrantLifetimeSeconds: Int64 = LANGrants.defaultLifetime
    /// The MQTT gateway devices connect to; nil runs the HTTP API alone.
    public var gateway: GatewayConfiguration? = GatewayConfiguration()
    /// How schedules fire.
    public var scheduler = SchedulerConfiguration()

    public init() {}

    var resolvedPublicURL: String { publicURL ?? "http://\(bindAddress):\(httpPort)" }

    var resolvedM2M: M2MEndpoint {
        m2m
            ?? M2MEndpoint(
                host: bindAddress == "0.0.0.0" ? "127.0.0.1" : bindAddress,
                mqttPort: gateway?.mqttPort ?? 1883, mqttTLSPort: gateway?.tlsPort ?? 8883,
                webSocketPort: httpPort
            )
    }
}

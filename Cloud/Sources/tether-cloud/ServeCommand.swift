import ArgumentParser
import Logging
import Metrics
import NIOCore
import NIOSSL
import Prometheus
import TetherCloud

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the cloud until SIGINT or SIGTERM, then finish requests in flight and stop."
    )

    @Option(name: .customLong("bind"), help: "Address to listen on (0.0.0.0 for every interface).")
    var bindAddress = "127.0.0.1"

    @Option(name: .customLong("http-port"), help: "Port of the REST API.")
    var httpPort = 8080

    @OptionGroup var databaseOptions: DatabaseOptions

    @Option(name: .customLong("public-url"), help: "Base URL of this server as users reach it, for links in e-mails.")
    var publicURL: String?

    @Option(name: .customLong("m2m-host"), help: "Host name devices and apps are told to reach the real-time side at.")
    var m2mHost: String?

    @Option(
        name: .customLong("smtp-url"),
        help: "Send e-mail through smtp://[USER:PASSWORD@]HOST[:PORT][?starttls=require] or smtps://…; without it e-mail waits in the outbox.")
    var smtpURL: String?

    @Option(name: .customLong("mail-from"), help: "The sender address of e-mail (with --smtp-url).")
    var mailFrom: String?

    @Option(name: .customLong("smtp-ca-file"), help: "PEM file of extra certificate authorities to trust for the SMTP server.")
    var smtpCAFile: String?

    @Option(name: .customLong("mqtt-port"), help: "Port of the device gateway (MQTT, Alink); 0 lets the system choose.")
    var mqttPort = 1883

    @Flag(name: .customLong("no-gateway"), help: "Serve the HTTP API only, without the device gateway.")
    var noGateway = false

    @Option(name: .customLong("mqtts-port"), help: "Port of the gateway's MQTT over TLS listener (with --tls-cert and --tls-key).")
    var mqttsPort: Int?

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain of the gateway's TLS listener.")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key of the gateway's TLS listener.")
    var tlsKey: String?

    @Option(name: .customLong("timestamp-skew"), help: "Seconds a device's signed timestamp may differ from this server's clock.")
    var timestampSkew: Int64 = 900

    @Option(name: .customLong("device-connect-timeout"), help: "Seconds a device has from opening its connection to being admitted (1 to 300).")
    var deviceConnectTimeout: Int64 = 10

    @Flag(name: .customLong("insecure-registration"), help: "Let devices register with their product secret over plain TCP (development only).")
    var insecureRegistration = false

    @Option(name: .customLong("token-lifetime"), help: "Seconds a user token stays valid (apps renew it before it ends).")
    var tokenLifetime: Int64 = 7 * 24 * 3600

    @Option(
        name: .customLong("lan-grant-lifetime"),
        help: "Seconds a LAN grant lasts (60 to 604800): the longest a revoked user may go on logging in on the LAN without the internet.")
    var lanGrantLifetime: Int64 = 3600

    @Option(name: .customLong("node-id"), help: "This node's name among the nodes sharing a PostgreSQL database (default: random).")
    var nodeID: String?

    @Option(name: .customLong("metrics-bind"), help: "HOST:PORT of the Prometheus /metrics listener, apart from the API; none for no metrics.")
    var metricsBind = "127.0.0.1:9464"

    @Option(name: .customLong("trusted-proxy"), help: "IP address of a reverse proxy whose X-Forwarded-For names the client (repeatable).")
    var trustedProxies: [String] = []

    @Option(name: .customLong("max-connections-per-source"), help: "HTTP connections one address (IPv6: one /64) may hold open.")
    var maxConnectionsPerSource = 256

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func run() async throws {
        var logger = Logger(label: "tether-cloud")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var configuration = CloudConfiguration()
        configuration.bindAddress = bindAddress
        configuration.httpPort = httpPort
        configuration.database = try DatabaseURL(databaseOptions.database)
        configuration.publicURL = publicURL
        guard (5...(365 * 24 * 3600)).contains(tokenLifetime) else { throw ValidationError("--token-lifetime is 5 seconds to 365 days") }
        configuration.accounts.tokenLifetime = tokenLifetime
        guard LANGrants.lifetimeRange.contains(lanGrantLifetime) else { throw ValidationError("--lan-grant-lifetime is 60 seconds to 7 days") }
        configuration.lanGrantLifetimeSeconds = lanGrantLifetime
        if metricsBind != "none" {
            guard let colon = metricsBind.lastIndex(of: ":"), let port = Int(metricsBind[metricsBind.index(after: colon)...]),
                (0...65535).contains(port), colon != metricsBind.startIndex
            else { throw ValidationError("--metrics-bind is HOST:PORT or none") }
            configuration.metricsAddress = (String(metricsBind[..<colon]), port)
        }
        for proxy in trustedProxies {
            guard (try? SocketAddress(ipAddress: proxy, port: 0)) != nil else { throw ValidationError("--trusted-proxy \(proxy) is not an IP address") }
        }
        configuration.trustedProxies = Set(trustedProxies)
        guard maxConnectionsPerSource >= 1 else { throw ValidationError("--max-connections-per-source is at least 1") }
        configuration.http.maximumConnectionsPerSource = maxConnectionsPerSource
        if noGateway {
            configuration.gateway = nil
        } else {
            var gateway = GatewayConfiguration()
            gateway.mqttPort = mqttPort
            gateway.timestampSkew = timestampSkew
            guard (1...300).contains(deviceConnectTimeout) else { throw ValidationError("--device-connect-timeout takes 1 to 300 seconds") }
            gateway.connectTimeout = .seconds(deviceConnectTimeout)
            gateway.allowRegistrationWithoutTLS = insecureRegistration
            if let nodeID { gateway.nodeID = nodeID }
            if let mqttsPort {
                guard let tlsCertificate, let tlsKey else { throw ValidationError("--mqtts-port needs --tls-cert and --tls-key") }
                gateway.tlsPort = mqttsPort
                gateway.tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(tlsCertificate).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(file: tlsKey, format: .pem))
                )
            }
            configuration.gateway = gateway
        }
        if let m2mHost {
            configuration.m2m = M2MEndpoint(host: m2mHost, mqttPort: mqttPort, mqttTLSPort: mqttsPort ?? 8883, webSocketPort: httpPort)
        }
        if let smtpURL {
            guard let mailFrom else { throw ValidationError("--smtp-url needs --mail-from ADDRESS") }
            configuration.smtp = try SMTPConfiguration(url: smtpURL, from: mailFrom, trustRootsFile: smtpCAFile)
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let announcer = logger
        let database = configuration.database
        try await CloudServer.serve(configuration: configuration, metrics: CloudMetrics(registry: registry), logger: logger) { channel in
            let address = channel.localAddress.map { "\($0)" } ?? "?"
            announcer.notice("tether-cloud listening", metadata: ["address": "\(address)", "database": "\(database)"])
        }
    }
}

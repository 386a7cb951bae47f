import ArgumentParser
import Foundation
import Logging
import Tether
import TetherCLISupport

/// What the account and device commands share: where the cloud is and as which app, read from
/// flags or from the config file that `tether login` writes, and the session file next to it.
struct CloudClientOptions: ParsableArguments {
    @Option(name: .long, help: "The cloud's URL, e.g. http://127.0.0.1:8080 (default: from the config file).")
    var cloud: String?

    @Option(name: .customLong("app-id"), help: "The app ID the cloud gave your app (default: from the config file).")
    var appID: String?

    @Option(name: .long, help: "The directory of the config and session files (default: TETHER_HOME, or ~/.tether).")
    var home: String?

    @Option(
        name: .long,
        help:
            "Where to look for devices on the LAN, HOST:PORT (repeatable; default: from the config file, else 255.255.255.255:12414). 'none' turns LAN discovery off."
    )
    var discover: [String] = []

    @Option(name: .long, help: "Seconds to wait for the cloud and for devices to answer.")
    var timeout: Double = 10

    @Flag(name: .long, help: "Log details to standard error.")
    var verbose = false

    func validate() throws {
        if let problem = problemWithSeconds(timeout, option: "--timeout", maximum: 3600, allowZero: false) { throw ValidationError(problem) }
        for target in discover where target != "none" && Self.endpoint(target) == nil {
            throw ValidationError("--discover takes HOST:PORT or none, not \(target)")
        }
    }

    var directory: String {
        if let home { return home }
        if let home = ProcessInfo.processInfo.environment["TETHER_HOME"], !home.isEmpty { return home }
        return (ProcessInfo.processInfo.environment["HOME"] ?? FileManager.default.temporaryDirectory.path) + "/.tether"
    }

    var configPath: String { directory + "/config.json" }

    var logger: Logger {
        var logger = Logger(label: "tether")
        logger.logLevel = verbose ? .debug : .critical
        return logger
    }

    var timeoutDuration: Duration { .milliseconds(Int(timeout * 1000)) }

    /// The saved configuration, with the flags' values over it.
    func settings() throws -> CLISettings {
        var settings = CLISettings.load(from: configPath)
        if let cloud { settings.cloud = cloud }
        if let appID { settings.appID = appID }
        if !discover.isEmpty { settings.discovery = discover }
        return settings
    }

    /// The client configuration for the saved or given cloud and app.
    func configuration(lanDiscovery: Bool = true) throws -> TetherClient.Configuration {
        let settings = try settings()
        guard let cloud = settings.cloud, let appID = settings.appID else {
            throw ValidationError("no cloud configured: pass --cloud URL --app-id ID (tether login saves them)")
        }
        let targets = settings.discovery.isEmpty ? ["255.255.255.255:12414"] : settings.discovery
        let endpoints = targets.compactMap(Self.endpoint)
        let lan = LANConfiguration(
            discoveryEnabled: lanDiscovery && !targets.contains("none") && !endpoints.isEmpty,
            discoveryTargets: endpoints, discoveryInterval: .milliseconds(500), tcpPort: settings.tcpPort ?? 12416, requestTimeout: .seconds(5)
        )
        return TetherClient.Configuration(
            lan: lan,
            cloud: .init(
                endpoint: try CloudEndpoint(url: cloud), appID: appID,
                sessionStore: FileSessionStore(path: "\(directory)/session-\(appID).json"),
                requestTimeout: timeoutDuration
            )
        )
    }

    /// Runs `body` with a client whose session (if any) is the saved one; product models come
    /// from the cloud as devices appear.
    func withClient<T: Sendable>(lanDiscovery: Bool = true, _ body: (TetherClient) async throws -> T) async throws -> T {
        try await withTetherClient(configuration: try configuration(lanDiscovery: lanDiscovery), logger: logger, body)
    }

    /// The device with this did: bound in the cloud, or answering discovery within the timeout.
    func device(_ did: String, in client: TetherClient) async throws -> Device {
        if client.account?.isLoggedIn == true { try await client.refreshBindings() }
        let deadline = ContinuousClock.now + timeoutDuration
        while ContinuousClock.now < deadline {
            if let device = client.device(did: did) { return device }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TetherError(.deviceOffline, "no device \(did): not bound to you, and not found on the LAN within \(timeout) s")
    }

    static func endpoint(_ text: String) -> LANEndpoint? {
        parseHostPort(text).map { LANEndpoint(host: $0.host, port: $0.port) }
    }
}

/// `config.json`: the cloud and app ID `tether login` saved, and where to look for devices.
struct CLISettings: Codable {
    var cloud: String?
    var appID: String?
    var discovery: [String] = []
    /// The devices' TCP control port (GAgent's 12416 when absent).
    var tcpPort: Int?

    enum CodingKeys: String, CodingKey {
        case cloud
        case appID = "appId"
        case discovery
        case tcpPort
    }

    static func load(from path: String) -> CLISettings {
        guard let data = FileManager.default.contents(atPath: path), let settings = try? JSONDecoder().decode(CLISettings.self, from: data) else {
            return CLISettings()
        }
        return settings
    }

    func save(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: url, options: .atomic)
    }
}

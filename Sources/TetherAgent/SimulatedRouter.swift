public import TetherCore

/// The networks a simulated device can join, for onboarding tests and demos: each with its
/// password; joining one that is not there, or with another password, fails as a real station
/// would (network not found, authentication error).
public struct SimulatedRouter: Sendable, Hashable {
    public struct Network: Sendable, Hashable {
        public var ssid: String
        public var password: String
        /// What a scan shows of it.
        public var rssi: Int
        public var channel: Int

        public init(ssid: String, password: String, rssi: Int = -50, channel: Int = 6) {
            self.ssid = ssid
            self.password = password
            self.rssi = rssi
            self.channel = channel
        }
    }

    public typealias JoinResult = WiFiJoinResult

    /// What goes wrong on purpose, for tests and demos of failed onboarding.
    public struct Faults: Sendable, Hashable {
        /// How long a join takes (the device says "connecting" meanwhile); a DHCP timeout adds
        /// this again before it fails.
        public var joinDelay: Duration
        /// The router refuses every association.
        public var refuseJoin: Bool
        /// The router's DHCP server never answers.
        public var dhcpTimeout: Bool
        /// Networks that show in a scan but are gone when the device joins.
        public var goneNetworks: Set<String>

        public init(joinDelay: Duration = .zero, refuseJoin: Bool = false, dhcpTimeout: Bool = false, goneNetworks: Set<String> = []) {
            self.joinDelay = joinDelay
            self.refuseJoin = refuseJoin
            self.dhcpTimeout = dhcpTimeout
            self.goneNetworks = goneNetworks
        }
    }

    /// Nil: any network and password are accepted.
    public var networks: [Network]?
    /// The address the router gives the device.
    public var deviceIP: String
    public var faults: Faults

    public init(networks: [Network]? = nil, deviceIP: String = "192.168.1.23", faults: Faults = Faults()) {
        self.networks = networks
        self.deviceIP = deviceIP
        self.faults = faults
    }

    /// `[{"ssid": "...", "password": "...", "rssi": -40, "channel": 6}]` (signal and channel optional).
    public init(json bytes: [UInt8], deviceIP: String = "192.168.1.23") throws(TetherError) {
        guard let list = try JSONValue.parse(bytes).arrayValue else { throw TetherError(.invalidArgument, "the networks file is a JSON list") }
        var networks: [Network] = []
        for entry in list {
            guard let ssid = entry["ssid"]?.stringValue, !ssid.isEmpty else { throw TetherError(.invalidArgument, "every network has an ssid") }
            let index = networks.count
            networks.append(
                Network(
                    ssid: ssid, password: entry["password"]?.stringValue ?? "", rssi: entry["rssi"]?.numberValue.map { Int($0) } ?? -40 - 7 * index,
                    channel: entry["channel"]?.numberValue.map { Int($0) } ?? 1 + (5 * index) % 13))
        }
        self.init(networks: networks, deviceIP: deviceIP)
    }

    /// What joining `ssid` with `password` comes to, at once (``join(ssid:password:)`` takes the
    /// router's time too).
    public func outcome(ssid: String, password: String) -> JoinResult {
        guard !faults.goneNetworks.contains(ssid) else { return .networkNotFound }
        if let networks {
            guard let network = networks.first(where: { $0.ssid == ssid }) else { return .networkNotFound }
            guard network.password == password else { return .wrongPassword }
        }
        if faults.refuseJoin { return .joinRefused }
        return faults.dhcpTimeout ? .noAddress : .joined(ip: deviceIP)
    }

    /// How long an outcome takes to show.
    public func joinDuration(_ result: JoinResult) -> Duration {
        result == .noAddress ? faults.joinDelay * 2 : faults.joinDelay
    }
}

extension SimulatedRouter: WiFiStation {
    public func scan() async throws(TetherError) -> [WiFiNetwork] {
        (networks ?? []).map { WiFiNetwork(ssid: $0.ssid, rssi: $0.rssi, channel: $0.channel, secured: !$0.password.isEmpty) }.sorted { $0.rssi > $1.rssi }
    }

    public func join(ssid: String, password: String) async -> WiFiJoinResult {
        let result = outcome(ssid: ssid, password: password)
        try? await Task.sleep(for: joinDuration(result))
        return result
    }
}

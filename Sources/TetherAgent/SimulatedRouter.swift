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

    public enum JoinResult: Sendable, Hashable {
        case joined(ip: String)
        case networkNotFound
        case wrongPassword
    }

    /// Nil: any network and password are accepted.
    public var networks: [Network]?
    /// The address the router gives the device.
    public var deviceIP: String

    public init(networks: [Network]? = nil, deviceIP: String = "192.168.1.23") {
        self.networks = networks
        self.deviceIP = deviceIP
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

    public func join(ssid: String, password: String) -> JoinResult {
        guard let networks else { return .joined(ip: deviceIP) }
        guard let network = networks.first(where: { $0.ssid == ssid }) else { return .networkNotFound }
        return network.password == password ? .joined(ip: deviceIP) : .wrongPassword
    }
}

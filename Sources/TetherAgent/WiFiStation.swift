public import TetherCore

/// A network a device's station hears.
public struct WiFiNetwork: Sendable, Hashable {
    public var ssid: String
    /// dBm.
    public var rssi: Int
    public var channel: Int
    /// False for an open network.
    public var secured: Bool

    public init(ssid: String, rssi: Int, channel: Int, secured: Bool) {
        self.ssid = ssid
        self.rssi = rssi
        self.channel = channel
        self.secured = secured
    }
}

/// How joining a network ended, in the words onboarding reports.
public enum WiFiJoinResult: Sendable, Hashable {
    case joined(ip: String)
    case networkNotFound
    case wrongPassword
    /// The access point refused the association.
    case joinRefused
    /// Associated, but DHCP gave no address.
    case noAddress
}

/// What onboarding hands the credentials to: the device's Wi-Fi station. The agent's devices
/// join a ``SimulatedRouter`` (tests and demos); ``NetworkManagerStation`` joins for real on a
/// Linux device through NetworkManager.
public protocol WiFiStation: Sendable {
    /// The networks in range, strongest first (ESP-IDF's `prov-scan`).
    func scan() async throws(TetherError) -> [WiFiNetwork]
    /// Joins `ssid`; returns when the outcome is known.
    func join(ssid: String, password: String) async -> WiFiJoinResult
}

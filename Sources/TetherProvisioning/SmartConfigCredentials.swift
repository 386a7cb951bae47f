public import TetherCore

/// What every smart-config encoder sends: the network's SSID and password as bytes (any
/// encoding; phones send UTF-8), and the access point's BSSID.
public struct SmartConfigCredentials: Sendable, Hashable, CustomStringConvertible {
    public var ssid: [UInt8]
    /// A secret: descriptions leave it out.
    public var password: [UInt8]
    /// The access point's MAC address (6 bytes); ESP-Touch sends it so that the device can tell
    /// networks with the same SSID apart.
    public var bssid: [UInt8]

    /// - Throws: `TetherError.Code.invalidArgument` for an SSID of 0 or more than 32 bytes, a
    ///   password of more than 64 bytes, or a BSSID that is not 6 bytes.
    public init(ssid: [UInt8], password: [UInt8], bssid: [UInt8] = [0, 0, 0, 0, 0, 0]) throws(TetherError) {
        guard (1...32).contains(ssid.count) else { throw TetherError(.invalidArgument, "an SSID is 1 to 32 bytes") }
        guard password.count <= 64 else { throw TetherError(.invalidArgument, "a Wi-Fi password is at most 64 bytes") }
        guard bssid.count == 6 else { throw TetherError(.invalidArgument, "a BSSID is 6 bytes") }
        self.ssid = ssid
        self.password = password
        self.bssid = bssid
    }

    public init(ssid: String, password: String, bssid: [UInt8] = [0, 0, 0, 0, 0, 0]) throws(TetherError) {
        try self.init(ssid: Array(ssid.utf8), password: Array(password.utf8), bssid: bssid)
    }

    public var description: String {
        "SmartConfigCredentials(ssid: \(String(decoding: ssid, as: UTF8.self)), password: <\(password.count) bytes>)"
    }
}

/// A Tuya command word (§5). Unknown values are kept, not refused.
public struct TuyaCommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let sessionKeyStart = Self(rawValue: 0x03)
    public static let sessionKeyResponse = Self(rawValue: 0x04)
    public static let sessionKeyFinish = Self(rawValue: 0x05)
    public static let control = Self(rawValue: 0x07)
    public static let status = Self(rawValue: 0x08)
    public static let heartbeat = Self(rawValue: 0x09)
    public static let query = Self(rawValue: 0x0A)
    public static let controlNew = Self(rawValue: 0x0D)
    public static let queryNew = Self(rawValue: 0x10)
    public static let updateDPS = Self(rawValue: 0x12)
    public static let udpAnnouncement = Self(rawValue: 0x13)
    public static let deviceInfoRequest = Self(rawValue: 0x25)
    public static let extendedStream = Self(rawValue: 0x40)

    /// Commands whose payload carries no version header (tinytuya's `NO_PROTOCOL_HEADER_CMDS`).
    public var hasVersionHeader: Bool {
        ![Self.query, .queryNew, .updateDPS, .heartbeat, .sessionKeyStart, .sessionKeyResponse, .sessionKeyFinish, .extendedStream].contains(self)
    }

    public var description: String {
        let names: [UInt32: String] = [
            0x03: "SESS_KEY_NEG_START", 0x04: "SESS_KEY_NEG_RESP", 0x05: "SESS_KEY_NEG_FINISH", 0x07: "CONTROL", 0x08: "STATUS", 0x09: "HEART_BEAT",
            0x0A: "DP_QUERY", 0x0D: "CONTROL_NEW", 0x10: "DP_QUERY_NEW", 0x12: "UPDATEDPS", 0x13: "UDP_NEW", 0x25: "REQ_DEVINFO", 0x40: "LAN_EXT_STREAM",
        ]
        return names[rawValue] ?? "0x" + String(rawValue, radix: 16)
    }
}

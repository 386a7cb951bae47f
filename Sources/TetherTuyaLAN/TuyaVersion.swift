/// A Tuya local protocol version (`shared/reference/tuya-lan.md` §3): how frames are built and
/// payloads protected.
public enum TuyaVersion: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case v31 = "3.1"
    case v32 = "3.2"
    case v33 = "3.3"
    case v34 = "3.4"
    case v35 = "3.5"

    public var description: String { rawValue }

    /// The three ASCII bytes of the version (`"3.3"`), which start the 15-byte version header.
    var bytes: [UInt8] { Array(rawValue.utf8) }

    /// Whether the connection negotiates a session key first (§4).
    public var negotiatesSessionKey: Bool { self == .v34 || self == .v35 }

    /// 6699 frames (AES-GCM) instead of 55AA.
    var usesGCM: Bool { self == .v35 }

    /// Writes (`CONTROL_NEW`) and reads (`DP_QUERY_NEW`) use the newer commands.
    public var usesNewCommands: Bool { negotiatesSessionKey }
}

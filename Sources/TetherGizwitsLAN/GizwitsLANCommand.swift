/// A GAgent LAN command word (`shared/reference/gizwits-lan.md` §3).
public struct GizwitsLANCommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The command word, a big-endian u16 on the wire.
    public let rawValue: UInt16

    /// Wraps any command word, known or not.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// App → device over UDP in SoftAP mode: the Wi-Fi credentials to join.
    public static let softAPConfiguration = Self(rawValue: 0x0001)
    /// Device → app: credentials received (sent even when they were invalid).
    public static let softAPConfigurationAck = Self(rawValue: 0x0002)
    /// App → device, UDP 12414, often broadcast: asks every device to identify itself.
    public static let discoveryRequest = Self(rawValue: 0x0003)
    /// Device → app: the answer to a discovery request, a ``GizwitsDeviceInfo`` body.
    public static let discoveryResponse = Self(rawValue: 0x0004)
    /// Device → UDP broadcast port 2415 at start-up, with the same body as a discovery answer.
    public static let announcement = Self(rawValue: 0x0005)
    /// App → device over TCP: asks for the passcode, handed out only in the binding window.
    public static let passcodeRequest = Self(rawValue: 0x0006)
    /// Device → app: the passcode, or an empty one when the device is not in its binding window.
    public static let passcodeResponse = Self(rawValue: 0x0007)
    /// App → device: logs in with the passcode.
    public static let login = Self(rawValue: 0x0008)
    /// Device → app: `00` on success, `01` on failure, after which the device closes the socket.
    public static let loginResult = Self(rawValue: 0x0009)
    /// App → device: asks for firmware info; GAgent 04020006 does not implement it.
    public static let firmwareInfoRequest = Self(rawValue: 0x000A)
    /// App → device: asks for the Wi-Fi networks the module sees; allowed before login.
    public static let hotspotListRequest = Self(rawValue: 0x000C)
    /// Device → app: SSIDs with their signal strength; the device then closes the socket.
    public static let hotspotList = Self(rawValue: 0x000D)
    /// App → device: reserved for logs; the device ignores it.
    public static let log = Self(rawValue: 0x0010)
    /// App → device: asks for ``GizwitsHardwareInfo``; allowed before login.
    public static let hardwareInfoRequest = Self(rawValue: 0x0013)
    /// Device → app: the module and MCU versions and the product key.
    public static let hardwareInfo = Self(rawValue: 0x0014)
    /// App → device, about every 4 s, so the device does not drop the client after 14 s of silence.
    public static let heartbeat = Self(rawValue: 0x0015)
    /// Device → app: the answer to a heartbeat.
    public static let heartbeatReply = Self(rawValue: 0x0016)
    /// App → device: production-test request; allowed before login.
    public static let productionTestRequest = Self(rawValue: 0x0017)
    /// Device → app: acknowledges the production test; the module leaves test mode.
    public static let productionTestAck = Self(rawValue: 0x0018)
    /// Device → UDP broadcast port 2415 after onboarding: MAC, product key and did, so that the
    /// phone that configured the device can recognise it.
    public static let configurationSuccess = Self(rawValue: 0x0019)
    /// App → device: a P0 payload, not acknowledged; a read is answered with ``p0FromDevice``.
    public static let p0ToDevice = Self(rawValue: 0x0090)
    /// Device → app: a P0 reply or unsolicited report, not acknowledged.
    public static let p0FromDevice = Self(rawValue: 0x0091)
    /// Either direction: a 4-byte `sn` then P0; the receiver answers ``p0Ack`` with the same `sn`.
    public static let p0WithAck = Self(rawValue: 0x0093)
    /// Either direction: acknowledges a ``p0WithAck``, echoing its `sn`; the P0 after it may be empty.
    public static let p0Ack = Self(rawValue: 0x0094)

    /// Commands a TCP client may send before it has logged in; anything else closes the socket.
    public static let allowedBeforeLogin: Set<GizwitsLANCommand> = [
        .passcodeRequest, .login, .hotspotListRequest, .hardwareInfoRequest, .productionTestRequest,
    ]

    /// The constant's name for a known command word, `unknown` otherwise.
    public var name: String {
        switch self {
        case .softAPConfiguration: return "softAPConfiguration"
        case .softAPConfigurationAck: return "softAPConfigurationAck"
        case .discoveryRequest: return "discoveryRequest"
        case .discoveryResponse: return "discoveryResponse"
        case .announcement: return "announcement"
        case .passcodeRequest: return "passcodeRequest"
        case .passcodeResponse: return "passcodeResponse"
        case .login: return "login"
        case .loginResult: return "loginResult"
        case .firmwareInfoRequest: return "firmwareInfoRequest"
        case .hotspotListRequest: return "hotspotListRequest"
        case .hotspotList: return "hotspotList"
        case .log: return "log"
        case .hardwareInfoRequest: return "hardwareInfoRequest"
        case .hardwareInfo: return "hardwareInfo"
        case .heartbeat: return "heartbeat"
        case .heartbeatReply: return "heartbeatReply"
        case .productionTestRequest: return "productionTestRequest"
        case .productionTestAck: return "productionTestAck"
        case .configurationSuccess: return "configurationSuccess"
        case .p0ToDevice: return "p0ToDevice"
        case .p0FromDevice: return "p0FromDevice"
        case .p0WithAck: return "p0WithAck"
        case .p0Ack: return "p0Ack"
        default: return "unknown"
        }
    }

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - hex.count) + hex + " " + name
    }
}

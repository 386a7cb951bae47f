/// A GAgent LAN command word (`shared/reference/gizwits-lan.md` §3).
public struct GizwitsLANCommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let softAPConfiguration = Self(rawValue: 0x0001)
    public static let softAPConfigurationAck = Self(rawValue: 0x0002)
    public static let discoveryRequest = Self(rawValue: 0x0003)
    public static let discoveryResponse = Self(rawValue: 0x0004)
    public static let announcement = Self(rawValue: 0x0005)
    public static let passcodeRequest = Self(rawValue: 0x0006)
    public static let passcodeResponse = Self(rawValue: 0x0007)
    public static let login = Self(rawValue: 0x0008)
    public static let loginResult = Self(rawValue: 0x0009)
    public static let firmwareInfoRequest = Self(rawValue: 0x000A)
    public static let hotspotListRequest = Self(rawValue: 0x000C)
    public static let hotspotList = Self(rawValue: 0x000D)
    public static let log = Self(rawValue: 0x0010)
    public static let hardwareInfoRequest = Self(rawValue: 0x0013)
    public static let hardwareInfo = Self(rawValue: 0x0014)
    public static let heartbeat = Self(rawValue: 0x0015)
    public static let heartbeatReply = Self(rawValue: 0x0016)
    public static let productionTestRequest = Self(rawValue: 0x0017)
    public static let productionTestAck = Self(rawValue: 0x0018)
    public static let configurationSuccess = Self(rawValue: 0x0019)
    public static let p0ToDevice = Self(rawValue: 0x0090)
    public static let p0FromDevice = Self(rawValue: 0x0091)
    public static let p0WithAck = Self(rawValue: 0x0093)
    public static let p0Ack = Self(rawValue: 0x0094)

    /// Commands a TCP client may send before it has logged in; anything else closes the socket.
    public static let allowedBeforeLogin: Set<GizwitsLANCommand> = [
        .passcodeRequest, .login, .hotspotListRequest, .hardwareInfoRequest, .productionTestRequest,
    ]

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

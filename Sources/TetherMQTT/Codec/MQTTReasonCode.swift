/// An MQTT 5 reason code (MQTT 5.0 §2.4). MQTT 3.1.1 CONNACK return codes map to the v5 codes
/// of the same meaning; see ``MQTTReasonCode/init(v311ConnectReturnCode:)``.
public struct MQTTReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = Self(rawValue: 0x00)
    public static let normalDisconnection = Self(rawValue: 0x00)
    public static let grantedQoS0 = Self(rawValue: 0x00)
    public static let grantedQoS1 = Self(rawValue: 0x01)
    public static let grantedQoS2 = Self(rawValue: 0x02)
    public static let disconnectWithWillMessage = Self(rawValue: 0x04)
    public static let noMatchingSubscribers = Self(rawValue: 0x10)
    public static let noSubscriptionExisted = Self(rawValue: 0x11)
    public static let continueAuthentication = Self(rawValue: 0x18)
    public static let reAuthenticate = Self(rawValue: 0x19)
    public static let unspecifiedError = Self(rawValue: 0x80)
    public static let malformedPacket = Self(rawValue: 0x81)
    public static let protocolError = Self(rawValue: 0x82)
    public static let implementationSpecificError = Self(rawValue: 0x83)
    public static let unsupportedProtocolVersion = Self(rawValue: 0x84)
    public static let clientIdentifierNotValid = Self(rawValue: 0x85)
    public static let badUserNameOrPassword = Self(rawValue: 0x86)
    public static let notAuthorized = Self(rawValue: 0x87)
    public static let serverUnavailable = Self(rawValue: 0x88)
    public static let serverBusy = Self(rawValue: 0x89)
    public static let banned = Self(rawValue: 0x8A)
    public static let serverShuttingDown = Self(rawValue: 0x8B)
    public static let badAuthenticationMethod = Self(rawValue: 0x8C)
    public static let keepAliveTimeout = Self(rawValue: 0x8D)
    public static let sessionTakenOver = Self(rawValue: 0x8E)
    public static let topicFilterInvalid = Self(rawValue: 0x8F)
    public static let topicNameInvalid = Self(rawValue: 0x90)
    public static let packetIdentifierInUse = Self(rawValue: 0x91)
    public static let packetIdentifierNotFound = Self(rawValue: 0x92)
    public static let receiveMaximumExceeded = Self(rawValue: 0x93)
    public static let topicAliasInvalid = Self(rawValue: 0x94)
    public static let packetTooLarge = Self(rawValue: 0x95)
    public static let messageRateTooHigh = Self(rawValue: 0x96)
    public static let quotaExceeded = Self(rawValue: 0x97)
    public static let administrativeAction = Self(rawValue: 0x98)
    public static let payloadFormatInvalid = Self(rawValue: 0x99)
    public static let retainNotSupported = Self(rawValue: 0x9A)
    public static let qosNotSupported = Self(rawValue: 0x9B)
    public static let useAnotherServer = Self(rawValue: 0x9C)
    public static let serverMoved = Self(rawValue: 0x9D)
    public static let sharedSubscriptionsNotSupported = Self(rawValue: 0x9E)
    public static let connectionRateExceeded = Self(rawValue: 0x9F)
    public static let maximumConnectTime = Self(rawValue: 0xA0)
    public static let subscriptionIdentifiersNotSupported = Self(rawValue: 0xA1)
    public static let wildcardSubscriptionsNotSupported = Self(rawValue: 0xA2)

    /// Codes of 0x80 and above are failures.
    public var isFailure: Bool { rawValue >= 0x80 }

    /// The v5 code for a v3.1.1 CONNACK return code (1…5).
    public init(v311ConnectReturnCode code: UInt8) {
        switch code {
        case 0: self = .success
        case 1: self = .unsupportedProtocolVersion
        case 2: self = .clientIdentifierNotValid
        case 3: self = .serverUnavailable
        case 4: self = .badUserNameOrPassword
        case 5: self = .notAuthorized
        default: self = .unspecifiedError
        }
    }

    /// The v3.1.1 CONNACK return code closest to this code.
    public var v311ConnectReturnCode: UInt8 {
        switch self {
        case .success: return 0
        case .unsupportedProtocolVersion: return 1
        case .clientIdentifierNotValid: return 2
        case .badUserNameOrPassword: return 4
        case .notAuthorized, .banned: return 5
        default: return 3
        }
    }

    public var description: String {
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true)
        switch self {
        case .success: return "\(hex) success"
        case .unspecifiedError: return "\(hex) unspecified error"
        case .malformedPacket: return "\(hex) malformed packet"
        case .protocolError: return "\(hex) protocol error"
        case .unsupportedProtocolVersion: return "\(hex) unsupported protocol version"
        case .clientIdentifierNotValid: return "\(hex) client identifier not valid"
        case .badUserNameOrPassword: return "\(hex) bad user name or password"
        case .notAuthorized: return "\(hex) not authorized"
        case .serverUnavailable: return "\(hex) server unavailable"
        case .serverBusy: return "\(hex) server busy"
        case .banned: return "\(hex) banned"
        case .serverShuttingDown: return "\(hex) server shutting down"
        case .keepAliveTimeout: return "\(hex) keep alive timeout"
        case .sessionTakenOver: return "\(hex) session taken over"
        case .topicFilterInvalid: return "\(hex) topic filter invalid"
        case .topicNameInvalid: return "\(hex) topic name invalid"
        case .packetTooLarge: return "\(hex) packet too large"
        case .quotaExceeded: return "\(hex) quota exceeded"
        case .qosNotSupported: return "\(hex) QoS not supported"
        case .receiveMaximumExceeded: return "\(hex) receive maximum exceeded"
        default: return hex
        }
    }
}

/// An MQTT 5 reason code (MQTT 5.0 §2.4). MQTT 3.1.1 CONNACK return codes map to the v5 codes
/// of the same meaning; see ``MQTTReasonCode/init(v311ConnectReturnCode:)``.
public struct MQTTReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code byte as it travels on the wire.
    public let rawValue: UInt8
    /// Wraps any byte, including codes this type has no name for.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00: the operation succeeded (CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, UNSUBACK, AUTH).
    public static let success = Self(rawValue: 0x00)
    /// 0x00 in DISCONNECT: a deliberate disconnection; the will is not published.
    public static let normalDisconnection = Self(rawValue: 0x00)
    /// 0x00 in SUBACK: subscription accepted with maximum QoS 0.
    public static let grantedQoS0 = Self(rawValue: 0x00)
    /// 0x01 in SUBACK: subscription accepted with maximum QoS 1.
    public static let grantedQoS1 = Self(rawValue: 0x01)
    /// 0x02 in SUBACK: subscription accepted with maximum QoS 2.
    public static let grantedQoS2 = Self(rawValue: 0x02)
    /// 0x04 in a client's DISCONNECT: disconnect, but have the server publish the will.
    public static let disconnectWithWillMessage = Self(rawValue: 0x04)
    /// 0x10 in PUBACK or PUBREC: accepted, but nobody is subscribed to the topic.
    public static let noMatchingSubscribers = Self(rawValue: 0x10)
    /// 0x11 in UNSUBACK: there was no such subscription to remove.
    public static let noSubscriptionExisted = Self(rawValue: 0x11)
    /// 0x18 in AUTH: the authentication exchange goes on with another step.
    public static let continueAuthentication = Self(rawValue: 0x18)
    /// 0x19 in a client's AUTH: start re-authentication on a live connection.
    public static let reAuthenticate = Self(rawValue: 0x19)
    /// 0x80: a failure the sender does not describe further.
    public static let unspecifiedError = Self(rawValue: 0x80)
    /// 0x81: the received packet could not be parsed.
    public static let malformedPacket = Self(rawValue: 0x81)
    /// 0x82: a well-formed packet the protocol does not allow at that point.
    public static let protocolError = Self(rawValue: 0x82)
    /// 0x83: a valid packet this implementation does not accept.
    public static let implementationSpecificError = Self(rawValue: 0x83)
    /// 0x84 in CONNACK: the protocol level is not supported (3.1.1 return code 1).
    public static let unsupportedProtocolVersion = Self(rawValue: 0x84)
    /// 0x85 in CONNACK: the client identifier is not allowed (3.1.1 return code 2).
    public static let clientIdentifierNotValid = Self(rawValue: 0x85)
    /// 0x86 in CONNACK: the credentials were not accepted (3.1.1 return code 4).
    public static let badUserNameOrPassword = Self(rawValue: 0x86)
    /// 0x87: not allowed to connect, publish or subscribe (3.1.1 CONNACK return code 5).
    public static let notAuthorized = Self(rawValue: 0x87)
    /// 0x88 in CONNACK: the server cannot serve clients now (3.1.1 return code 3).
    public static let serverUnavailable = Self(rawValue: 0x88)
    /// 0x89: the server is busy; try again later.
    public static let serverBusy = Self(rawValue: 0x89)
    /// 0x8A in CONNACK: this client is banned (sent as return code 5 in 3.1.1).
    public static let banned = Self(rawValue: 0x8A)
    /// 0x8B in DISCONNECT: the server is shutting down.
    public static let serverShuttingDown = Self(rawValue: 0x8B)
    /// 0x8C: the authentication method is not supported or differs from the one in use.
    public static let badAuthenticationMethod = Self(rawValue: 0x8C)
    /// 0x8D in DISCONNECT: nothing arrived within 1.5 times the keep-alive interval.
    public static let keepAliveTimeout = Self(rawValue: 0x8D)
    /// 0x8E in DISCONNECT: another connection with the same client identifier took the session.
    public static let sessionTakenOver = Self(rawValue: 0x8E)
    /// 0x8F: the topic filter is well-formed but not accepted.
    public static let topicFilterInvalid = Self(rawValue: 0x8F)
    /// 0x90: the topic name is not accepted.
    public static let topicNameInvalid = Self(rawValue: 0x90)
    /// 0x91: the packet identifier is already in use by another exchange.
    public static let packetIdentifierInUse = Self(rawValue: 0x91)
    /// 0x92 in PUBREL or PUBCOMP: the packet identifier is not known.
    public static let packetIdentifierNotFound = Self(rawValue: 0x92)
    /// 0x93 in DISCONNECT: more QoS 1 and 2 publications in flight than Receive Maximum allows.
    public static let receiveMaximumExceeded = Self(rawValue: 0x93)
    /// 0x94 in DISCONNECT: a PUBLISH used a topic alias above the allowed Topic Alias Maximum.
    public static let topicAliasInvalid = Self(rawValue: 0x94)
    /// 0x95: a packet exceeded the maximum packet size.
    public static let packetTooLarge = Self(rawValue: 0x95)
    /// 0x96 in DISCONNECT: publications arrive faster than allowed.
    public static let messageRateTooHigh = Self(rawValue: 0x96)
    /// 0x97: an implementation or administrative quota was exceeded.
    public static let quotaExceeded = Self(rawValue: 0x97)
    /// 0x98 in DISCONNECT: the connection was closed by an administrative action.
    public static let administrativeAction = Self(rawValue: 0x98)
    /// 0x99: the payload does not match its Payload Format Indicator.
    public static let payloadFormatInvalid = Self(rawValue: 0x99)
    /// 0x9A: the server does not accept retained messages.
    public static let retainNotSupported = Self(rawValue: 0x9A)
    /// 0x9B: the QoS is above the server's Maximum QoS.
    public static let qosNotSupported = Self(rawValue: 0x9B)
    /// 0x9C: use another server for now (named by the Server Reference property).
    public static let useAnotherServer = Self(rawValue: 0x9C)
    /// 0x9D: use another server from now on (named by the Server Reference property).
    public static let serverMoved = Self(rawValue: 0x9D)
    /// 0x9E: the server does not support shared subscriptions.
    public static let sharedSubscriptionsNotSupported = Self(rawValue: 0x9E)
    /// 0x9F in CONNACK: connections arrive faster than the server allows.
    public static let connectionRateExceeded = Self(rawValue: 0x9F)
    /// 0xA0 in DISCONNECT: the connection reached the longest time it is allowed to last.
    public static let maximumConnectTime = Self(rawValue: 0xA0)
    /// 0xA1: the server does not support subscription identifiers.
    public static let subscriptionIdentifiersNotSupported = Self(rawValue: 0xA1)
    /// 0xA2: the server does not support wildcard subscriptions.
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

    /// The code in hex followed, for common codes, by its name: "0x87 not authorized".
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

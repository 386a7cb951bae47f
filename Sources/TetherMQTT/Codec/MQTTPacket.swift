public import NIOCore

/// The protocol level: 3 (MQTT 3.1, "MQIsdp"), 4 (MQTT 3.1.1) or 5 (MQTT 5.0).
public enum MQTTVersion: UInt8, Hashable, Sendable, CustomStringConvertible {
    case v31 = 3
    case v311 = 4
    case v5 = 5

    public var description: String {
        switch self {
        case .v31: return "3.1"
        case .v311: return "3.1.1"
        case .v5: return "5.0"
        }
    }

    var protocolName: String { self == .v31 ? "MQIsdp" : "MQTT" }
}

public enum MQTTQoS: UInt8, Hashable, Sendable, Comparable, CaseIterable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The message a server publishes for a client whose connection ends without DISCONNECT.
public struct MQTTWill: Hashable, Sendable {
    public var topic: String
    public var payload: ByteBuffer
    public var qos: MQTTQoS
    public var retain: Bool
    /// v5 will properties (will delay, message expiry, content type, …).
    public var properties: MQTTProperties

    public init(topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }
}

public struct MQTTConnect: Hashable, Sendable {
    public var version: MQTTVersion
    public var clientID: String
    /// Clean Session (3.1.1) / Clean Start (5).
    public var cleanStart: Bool
    /// Seconds; 0 turns keep-alive off.
    public var keepAlive: UInt16
    public var username: String?
    public var password: [UInt8]?
    public var will: MQTTWill?
    public var properties: MQTTProperties

    public init(version: MQTTVersion, clientID: String, cleanStart: Bool = true, keepAlive: UInt16 = 60, username: String? = nil, password: [UInt8]? = nil, will: MQTTWill? = nil, properties: MQTTProperties = []) {
        self.version = version
        self.clientID = clientID
        self.cleanStart = cleanStart
        self.keepAlive = keepAlive
        self.username = username
        self.password = password
        self.will = will
        self.properties = properties
    }
}

public struct MQTTConnAck: Hashable, Sendable {
    public var sessionPresent: Bool
    /// v3.1.1 return codes are mapped to the v5 code of the same meaning.
    public var reasonCode: MQTTReasonCode
    public var properties: MQTTProperties

    public init(sessionPresent: Bool = false, reasonCode: MQTTReasonCode = .success, properties: MQTTProperties = []) {
        self.sessionPresent = sessionPresent
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

public struct MQTTPublish: Hashable, Sendable {
    public var topic: String
    public var payload: ByteBuffer
    public var qos: MQTTQoS
    public var retain: Bool
    public var dup: Bool
    /// Present for QoS 1 and 2.
    public var packetID: UInt16?
    public var properties: MQTTProperties

    public init(topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false, dup: Bool = false, packetID: UInt16? = nil, properties: MQTTProperties = []) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.dup = dup
        self.packetID = packetID
        self.properties = properties
    }
}

/// PUBACK, PUBREC, PUBREL and PUBCOMP.
public struct MQTTAck: Hashable, Sendable {
    public var packetID: UInt16
    public var reasonCode: MQTTReasonCode
    public var properties: MQTTProperties

    public init(packetID: UInt16, reasonCode: MQTTReasonCode = .success, properties: MQTTProperties = []) {
        self.packetID = packetID
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// One topic filter of a SUBSCRIBE, with its options.
public struct MQTTTopicSubscription: Hashable, Sendable {
    public enum RetainHandling: UInt8, Hashable, Sendable {
        /// Send retained messages at subscribe time.
        case sendOnSubscribe = 0
        /// Only if the subscription did not exist.
        case sendOnNewSubscribe = 1
        case doNotSend = 2
    }

    public var filter: String
    public var qos: MQTTQoS
    /// v5: do not receive one's own publications.
    public var noLocal: Bool
    /// v5: keep the RETAIN flag as published.
    public var retainAsPublished: Bool
    public var retainHandling: RetainHandling

    public init(filter: String, qos: MQTTQoS = .atMostOnce, noLocal: Bool = false, retainAsPublished: Bool = false, retainHandling: RetainHandling = .sendOnSubscribe) {
        self.filter = filter
        self.qos = qos
        self.noLocal = noLocal
        self.retainAsPublished = retainAsPublished
        self.retainHandling = retainHandling
    }
}

public struct MQTTSubscribe: Hashable, Sendable {
    public var packetID: UInt16
    public var subscriptions: [MQTTTopicSubscription]
    public var properties: MQTTProperties

    public init(packetID: UInt16, subscriptions: [MQTTTopicSubscription], properties: MQTTProperties = []) {
        self.packetID = packetID
        self.subscriptions = subscriptions
        self.properties = properties
    }
}

/// SUBACK and UNSUBACK (UNSUBACK has no reason codes in 3.1.1).
public struct MQTTSubAck: Hashable, Sendable {
    public var packetID: UInt16
    public var reasonCodes: [MQTTReasonCode]
    public var properties: MQTTProperties

    public init(packetID: UInt16, reasonCodes: [MQTTReasonCode], properties: MQTTProperties = []) {
        self.packetID = packetID
        self.reasonCodes = reasonCodes
        self.properties = properties
    }
}

public struct MQTTUnsubscribe: Hashable, Sendable {
    public var packetID: UInt16
    public var filters: [String]
    public var properties: MQTTProperties

    public init(packetID: UInt16, filters: [String], properties: MQTTProperties = []) {
        self.packetID = packetID
        self.filters = filters
        self.properties = properties
    }
}

/// DISCONNECT and AUTH: a reason code and properties (both v5 only).
public struct MQTTReasonPacket: Hashable, Sendable {
    public var reasonCode: MQTTReasonCode
    public var properties: MQTTProperties

    public init(reasonCode: MQTTReasonCode = .success, properties: MQTTProperties = []) {
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// Every MQTT control packet, for 3.1, 3.1.1 and 5.0.
public enum MQTTPacket: Hashable, Sendable {
    case connect(MQTTConnect)
    case connack(MQTTConnAck)
    case publish(MQTTPublish)
    case puback(MQTTAck)
    case pubrec(MQTTAck)
    case pubrel(MQTTAck)
    case pubcomp(MQTTAck)
    case subscribe(MQTTSubscribe)
    case suback(MQTTSubAck)
    case unsubscribe(MQTTUnsubscribe)
    case unsuback(MQTTSubAck)
    case pingreq
    case pingresp
    case disconnect(MQTTReasonPacket)
    /// v5 only.
    case auth(MQTTReasonPacket)

    /// The control packet type (upper nibble of the first byte).
    public var type: UInt8 {
        switch self {
        case .connect: return 1
        case .connack: return 2
        case .publish: return 3
        case .puback: return 4
        case .pubrec: return 5
        case .pubrel: return 6
        case .pubcomp: return 7
        case .subscribe: return 8
        case .suback: return 9
        case .unsubscribe: return 10
        case .unsuback: return 11
        case .pingreq: return 12
        case .pingresp: return 13
        case .disconnect: return 14
        case .auth: return 15
        }
    }

    public var name: String {
        ["", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"][Int(type)]
    }
}

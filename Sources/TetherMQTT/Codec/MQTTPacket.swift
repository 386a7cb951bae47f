public import NIOCore

/// The protocol level: 3 (MQTT 3.1, "MQIsdp"), 4 (MQTT 3.1.1) or 5 (MQTT 5.0).
public enum MQTTVersion: UInt8, Hashable, Sendable, CustomStringConvertible {
    /// MQTT 3.1: protocol name "MQIsdp", level 3.
    case v31 = 3
    /// MQTT 3.1.1: protocol name "MQTT", level 4.
    case v311 = 4
    /// MQTT 5.0: level 5, the only version with properties and reason codes in acknowledgements.
    case v5 = 5

    /// The version as people write it: "3.1", "3.1.1" or "5.0".
    public var description: String {
        switch self {
        case .v31: return "3.1"
        case .v311: return "3.1.1"
        case .v5: return "5.0"
        }
    }

    var protocolName: String { self == .v31 ? "MQIsdp" : "MQTT" }
}

/// A delivery guarantee: the QoS bits of a PUBLISH and the maximum QoS of a subscription.
/// Ordered by level, so the lower of two is `min(a, b)`.
public enum MQTTQoS: UInt8, Hashable, Sendable, Comparable, CaseIterable {
    /// QoS 0: sent once and never acknowledged; the message may be lost.
    case atMostOnce = 0
    /// QoS 1: resent until a PUBACK arrives; the message may arrive more than once.
    case atLeastOnce = 1
    /// QoS 2: the PUBREC, PUBREL, PUBCOMP exchange delivers the message exactly once.
    case exactlyOnce = 2

    /// Compares levels by their numeric value: 0 < 1 < 2.
    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The message a server publishes for a client whose connection ends without DISCONNECT.
public struct MQTTWill: Hashable, Sendable {
    /// The topic name the will is published to; it must not contain wildcards.
    public var topic: String
    /// The will message bytes; CONNECT carries at most 65,535 of them.
    public var payload: ByteBuffer
    /// The QoS the server publishes the will with.
    public var qos: MQTTQoS
    /// Whether the server publishes the will as a retained message.
    public var retain: Bool
    /// v5 will properties (will delay, message expiry, content type, …).
    public var properties: MQTTProperties

    /// Builds a will as given; the topic is not checked here (a server rejects wildcards in it).
    public init(topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false, properties: MQTTProperties = []) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }
}

/// The CONNECT packet: a client's first packet, with its identity, session choice, credentials and will.
public struct MQTTConnect: Hashable, Sendable {
    /// The protocol level requested; it also selects the wire format of the rest of the connection.
    public var version: MQTTVersion
    /// Identifies the session on the server; empty asks the server to assign one.
    public var clientID: String
    /// Clean Session (3.1.1) / Clean Start (5).
    public var cleanStart: Bool
    /// Seconds; 0 turns keep-alive off.
    public var keepAlive: UInt16
    /// The user name, if any; its presence sets the User Name flag.
    public var username: String?
    /// The password bytes, if any (3.1 and 3.1.1 allow one only with a user name). Never log this.
    public var password: [UInt8]?
    /// The message the server publishes if this connection ends without DISCONNECT.
    public var will: MQTTWill?
    /// v5 CONNECT properties (session expiry, receive maximum, maximum packet size…); not sent in 3.1.x.
    public var properties: MQTTProperties

    /// Builds a CONNECT as given; nothing is checked until it is encoded.
    public init(
        version: MQTTVersion, clientID: String, cleanStart: Bool = true, keepAlive: UInt16 = 60, username: String? = nil, password: [UInt8]? = nil,
        will: MQTTWill? = nil, properties: MQTTProperties = []
    ) {
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

/// The CONNACK packet: the server's acceptance or refusal of a CONNECT.
public struct MQTTConnAck: Hashable, Sendable {
    /// Whether the server resumed a session it had stored for this client identifier.
    public var sessionPresent: Bool
    /// v3.1.1 return codes are mapped to the v5 code of the same meaning.
    public var reasonCode: MQTTReasonCode
    /// v5 CONNACK properties: the server's limits (receive maximum, maximum QoS, topic alias maximum…)
    /// and an assigned client identifier; not sent in 3.1.1.
    public var properties: MQTTProperties

    /// Builds a CONNACK; the defaults accept the connection without a stored session.
    public init(sessionPresent: Bool = false, reasonCode: MQTTReasonCode = .success, properties: MQTTProperties = []) {
        self.sessionPresent = sessionPresent
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// The PUBLISH packet: an application message with its delivery flags, in either direction.
public struct MQTTPublish: Hashable, Sendable {
    /// The topic name, without wildcards; empty only in v5 when a topic alias stands for it.
    public var topic: String
    /// The application message: whatever follows the variable header, opaque to MQTT.
    public var payload: ByteBuffer
    /// The delivery guarantee; QoS 1 and 2 need a ``MQTTPublish/packetID``.
    public var qos: MQTTQoS
    /// To a server: keep this as the topic's retained message (an empty payload clears it).
    /// From a server: this is a retained message.
    public var retain: Bool
    /// Set when a QoS 1 or 2 PUBLISH is sent again; it must be false for QoS 0.
    public var dup: Bool
    /// Present for QoS 1 and 2.
    public var packetID: UInt16?
    /// v5 PUBLISH properties (message expiry, topic alias, response topic…); not sent in 3.1.x.
    public var properties: MQTTProperties

    /// Builds a PUBLISH as given; encoding throws if QoS 1 or 2 lacks a non-zero packet identifier.
    public init(
        topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false, dup: Bool = false, packetID: UInt16? = nil,
        properties: MQTTProperties = []
    ) {
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
    /// The identifier of the QoS 1 or 2 PUBLISH this acknowledges (1…65,535).
    public var packetID: UInt16
    /// The v5 result, such as 0x00 success, 0x10 no matching subscribers or 0x92 packet
    /// identifier not found; 3.1.x carries none and reads as `.success`.
    public var reasonCode: MQTTReasonCode
    /// v5 properties: a reason string and user properties; not sent in 3.1.x.
    public var properties: MQTTProperties

    /// Builds an acknowledgement; success without properties is encoded in the short 2-byte form.
    public init(packetID: UInt16, reasonCode: MQTTReasonCode = .success, properties: MQTTProperties = []) {
        self.packetID = packetID
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// One topic filter of a SUBSCRIBE, with its options.
public struct MQTTTopicSubscription: Hashable, Sendable {
    /// When the server sends retained messages for a subscription (v5 option; not encoded in 3.1.x).
    public enum RetainHandling: UInt8, Hashable, Sendable {
        /// Send retained messages at subscribe time.
        case sendOnSubscribe = 0
        /// Only if the subscription did not exist.
        case sendOnNewSubscribe = 1
        /// Never send retained messages for this subscription.
        case doNotSend = 2
    }

    /// The topic filter, possibly with `+` and `#` wildcards or a `$share/{group}/` prefix.
    public var filter: String
    /// The highest QoS the subscriber accepts; messages are delivered at most at this level.
    public var qos: MQTTQoS
    /// v5: do not receive one's own publications.
    public var noLocal: Bool
    /// v5: keep the RETAIN flag as published.
    public var retainAsPublished: Bool
    /// v5: whether retained messages are sent when the subscription is made.
    public var retainHandling: RetainHandling

    /// Builds a subscription; the filter is not validated here.
    public init(
        filter: String, qos: MQTTQoS = .atMostOnce, noLocal: Bool = false, retainAsPublished: Bool = false, retainHandling: RetainHandling = .sendOnSubscribe
    ) {
        self.filter = filter
        self.qos = qos
        self.noLocal = noLocal
        self.retainAsPublished = retainAsPublished
        self.retainHandling = retainHandling
    }
}

/// The SUBSCRIBE packet: one or more topic filters with their options.
public struct MQTTSubscribe: Hashable, Sendable {
    /// Identifies the request; the SUBACK repeats it (1…65,535).
    public var packetID: UInt16
    /// The filters requested; the SUBACK answers each in this order. Never empty on the wire.
    public var subscriptions: [MQTTTopicSubscription]
    /// v5 properties: a subscription identifier and user properties; not sent in 3.1.x.
    public var properties: MQTTProperties

    /// Builds a SUBSCRIBE as given, without validating the filters.
    public init(packetID: UInt16, subscriptions: [MQTTTopicSubscription], properties: MQTTProperties = []) {
        self.packetID = packetID
        self.subscriptions = subscriptions
        self.properties = properties
    }
}

/// SUBACK and UNSUBACK (UNSUBACK has no reason codes in 3.1.1).
public struct MQTTSubAck: Hashable, Sendable {
    /// The identifier of the SUBSCRIBE or UNSUBSCRIBE answered.
    public var packetID: UInt16
    /// One per requested filter, in order: a granted QoS (0x00…0x02) or a failure (0x80 and
    /// above); always empty in a 3.1.x UNSUBACK.
    public var reasonCodes: [MQTTReasonCode]
    /// v5 properties: a reason string and user properties; not sent in 3.1.x.
    public var properties: MQTTProperties

    /// Builds a SUBACK or UNSUBACK as given.
    public init(packetID: UInt16, reasonCodes: [MQTTReasonCode], properties: MQTTProperties = []) {
        self.packetID = packetID
        self.reasonCodes = reasonCodes
        self.properties = properties
    }
}

/// The UNSUBSCRIBE packet: topic filters to remove, spelled as they were subscribed.
public struct MQTTUnsubscribe: Hashable, Sendable {
    /// Identifies the request; the UNSUBACK repeats it (1…65,535).
    public var packetID: UInt16
    /// The topic filters to remove; never empty on the wire.
    public var filters: [String]
    /// v5 properties: user properties only; not sent in 3.1.x.
    public var properties: MQTTProperties

    /// Builds an UNSUBSCRIBE as given, without validating the filters.
    public init(packetID: UInt16, filters: [String], properties: MQTTProperties = []) {
        self.packetID = packetID
        self.filters = filters
        self.properties = properties
    }
}

/// DISCONNECT and AUTH: a reason code and properties (both v5 only).
public struct MQTTReasonPacket: Hashable, Sendable {
    /// Why: in DISCONNECT 0x00 normal, 0x04 with will, or an error; in AUTH 0x00, 0x18
    /// continue or 0x19 re-authenticate. Not sent in 3.1.x.
    public var reasonCode: MQTTReasonCode
    /// v5 properties (reason string, session expiry, server reference, authentication method and data…).
    public var properties: MQTTProperties

    /// Builds the packet; the defaults are encoded as an empty body, as 3.1.x requires.
    public init(reasonCode: MQTTReasonCode = .success, properties: MQTTProperties = []) {
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// Every MQTT control packet, for 3.1, 3.1.1 and 5.0.
public enum MQTTPacket: Hashable, Sendable {
    /// Type 1, client to server: opens the session; must be the first packet.
    case connect(MQTTConnect)
    /// Type 2, server to client: accepts or refuses the CONNECT.
    case connack(MQTTConnAck)
    /// Type 3, either direction: an application message.
    case publish(MQTTPublish)
    /// Type 4: acknowledges a QoS 1 PUBLISH.
    case puback(MQTTAck)
    /// Type 5: first answer to a QoS 2 PUBLISH, "received".
    case pubrec(MQTTAck)
    /// Type 6: answers PUBREC, releasing the QoS 2 message.
    case pubrel(MQTTAck)
    /// Type 7: answers PUBREL, completing the QoS 2 exchange.
    case pubcomp(MQTTAck)
    /// Type 8, client to server: adds subscriptions.
    case subscribe(MQTTSubscribe)
    /// Type 9, server to client: one result per requested filter.
    case suback(MQTTSubAck)
    /// Type 10, client to server: removes subscriptions.
    case unsubscribe(MQTTUnsubscribe)
    /// Type 11, server to client: confirms an UNSUBSCRIBE (with v5 reason codes).
    case unsuback(MQTTSubAck)
    /// Type 12, client to server: a keep-alive probe without body.
    case pingreq
    /// Type 13, server to client: the answer to PINGREQ.
    case pingresp
    /// Type 14: ends the connection on purpose; a normal one (0x00) discards the will.
    /// Servers send it too in v5.
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

    /// The packet type's name as the specification spells it ("PUBLISH"), for logs and errors.
    public var name: String {
        [
            "", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ",
            "PINGRESP", "DISCONNECT", "AUTH",
        ][Int(type)]
    }
}

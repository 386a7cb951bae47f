import NIOCore

/// One MQTT 5 property (MQTT 5.0 §2.2.2.2).
public enum MQTTProperty: Hashable, Sendable {
    /// 0x01, PUBLISH and will: 0 for unspecified bytes, 1 for UTF-8 text.
    case payloadFormatIndicator(UInt8)
    /// 0x02, PUBLISH and will: seconds after which an undelivered message is dropped.
    case messageExpiryInterval(UInt32)
    /// 0x03, PUBLISH and will: the payload's content type, such as a MIME type.
    case contentType(String)
    /// 0x08, PUBLISH and will: the topic a response should be published to.
    case responseTopic(String)
    /// 0x09, PUBLISH and will: bytes that pair a response with its request.
    case correlationData([UInt8])
    /// 0x0B, 1…268,435,455: set on a SUBSCRIBE, then carried by each PUBLISH its subscription matches.
    case subscriptionIdentifier(Int)
    /// 0x11, CONNECT, CONNACK, DISCONNECT: seconds a session outlives its connection.
    case sessionExpiryInterval(UInt32)
    /// 0x12, CONNACK: the client identifier the server chose for an empty one.
    case assignedClientIdentifier(String)
    /// 0x13, CONNACK: the keep-alive in seconds the server imposes instead of the client's.
    case serverKeepAlive(UInt16)
    /// 0x15, CONNECT, CONNACK, AUTH: the name of the extended authentication method.
    case authenticationMethod(String)
    /// 0x16, CONNECT, CONNACK, AUTH: the method's data for this step.
    case authenticationData([UInt8])
    /// 0x17, CONNECT: 0 asks the server to send reason strings and user properties only in CONNACK
    /// and DISCONNECT.
    case requestProblemInformation(UInt8)
    /// 0x18, will: seconds the server waits before publishing the will.
    case willDelayInterval(UInt32)
    /// 0x19, CONNECT: 1 asks the server for Response Information in CONNACK.
    case requestResponseInformation(UInt8)
    /// 0x1A, CONNACK: a basis for response topics, sent when requested.
    case responseInformation(String)
    /// 0x1C, CONNACK, DISCONNECT: another server to use, with 0x9C or 0x9D.
    case serverReference(String)
    /// 0x1F, acknowledgements, DISCONNECT, AUTH: human-readable detail of the reason code.
    case reasonString(String)
    /// 0x21, CONNECT, CONNACK: QoS 1 and 2 publications the sender accepts in flight; not 0.
    case receiveMaximum(UInt16)
    /// 0x22, CONNECT, CONNACK: the highest topic alias the sender accepts; 0 means none.
    case topicAliasMaximum(UInt16)
    /// 0x23, PUBLISH: a number standing for the topic name on this connection; not 0.
    case topicAlias(UInt16)
    /// 0x24, CONNACK: 0 or 1, the highest QoS the server accepts (absent: 2).
    case maximumQoS(UInt8)
    /// 0x25, CONNACK: 0 when the server does not accept retained messages.
    case retainAvailable(UInt8)
    /// 0x26, any packet: a name and value pair of the application's; may repeat.
    case userProperty(String, String)
    /// 0x27, CONNECT, CONNACK: the largest packet in bytes the sender accepts; not 0.
    case maximumPacketSize(UInt32)
    /// 0x28, CONNACK: 0 when the server does not accept wildcard subscriptions.
    case wildcardSubscriptionAvailable(UInt8)
    /// 0x29, CONNACK: 0 when the server does not support subscription identifiers.
    case subscriptionIdentifierAvailable(UInt8)
    /// 0x2A, CONNACK: 0 when the server does not support shared subscriptions.
    case sharedSubscriptionAvailable(UInt8)

    /// The property's identifier byte on the wire (0x01…0x2A).
    public var identifier: UInt8 {
        switch self {
        case .payloadFormatIndicator: return 0x01
        case .messageExpiryInterval: return 0x02
        case .contentType: return 0x03
        case .responseTopic: return 0x08
        case .correlationData: return 0x09
        case .subscriptionIdentifier: return 0x0B
        case .sessionExpiryInterval: return 0x11
        case .assignedClientIdentifier: return 0x12
        case .serverKeepAlive: return 0x13
        case .authenticationMethod: return 0x15
        case .authenticationData: return 0x16
        case .requestProblemInformation: return 0x17
        case .willDelayInterval: return 0x18
        case .requestResponseInformation: return 0x19
        case .responseInformation: return 0x1A
        case .serverReference: return 0x1C
        case .reasonString: return 0x1F
        case .receiveMaximum: return 0x21
        case .topicAliasMaximum: return 0x22
        case .topicAlias: return 0x23
        case .maximumQoS: return 0x24
        case .retainAvailable: return 0x25
        case .userProperty: return 0x26
        case .maximumPacketSize: return 0x27
        case .wildcardSubscriptionAvailable: return 0x28
        case .subscriptionIdentifierAvailable: return 0x29
        case .sharedSubscriptionAvailable: return 0x2A
        }
    }
}

/// The packets (and the will) that carry properties, each with its own allowed set.
enum MQTTPropertyContext: String {
    case connect = "CONNECT", connack = "CONNACK", publish = "PUBLISH", will = "will", ack = "acknowledgement"
    case subscribe = "SUBSCRIBE", suback = "SUBACK", unsubscribe = "UNSUBSCRIBE", unsuback = "UNSUBACK"
    case disconnect = "DISCONNECT", auth = "AUTH"

    /// MQTT 5.0 §2.2.2.2, the table of properties.
    func allows(_ identifier: UInt8) -> Bool {
        switch identifier {
        case 0x26: return true
        case 0x01, 0x02, 0x03, 0x08, 0x09: return self == .publish || self == .will
        case 0x0B: return self == .publish || self == .subscribe
        case 0x11: return self == .connect || self == .connack || self == .disconnect
        case 0x12, 0x13, 0x1A, 0x24, 0x25, 0x28, 0x29, 0x2A: return self == .connack
        case 0x15, 0x16: return self == .connect || self == .connack || self == .auth
        case 0x17, 0x19: return self == .connect
        case 0x18: return self == .will
        case 0x1C: return self == .connack || self == .disconnect
        case 0x1F: return [.connack, .ack, .suback, .unsuback, .disconnect, .auth].contains(self)
        case 0x21, 0x22, 0x27: return self == .connect || self == .connack
        case 0x23: return self == .publish
        default: return false
        }
    }
}

/// The properties of a packet, in the order they were given or received.
public struct MQTTProperties: Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The properties in order; user properties and a PUBLISH's subscription identifiers may repeat.
    public var list: [MQTTProperty]

    /// Wraps a list as given; which properties a packet allows is checked only when decoding.
    public init(_ list: [MQTTProperty] = []) { self.list = list }
    /// Builds the list from a literal: `[.receiveMaximum(10), .userProperty("k", "v")]`.
    public init(arrayLiteral elements: MQTTProperty...) { self.list = elements }

    /// Whether there are no properties; v5 acknowledgements then use their short form.
    public var isEmpty: Bool { list.isEmpty }

    /// Session Expiry Interval (0x11) in seconds, if present (CONNECT, CONNACK, DISCONNECT).
    public var sessionExpiryInterval: UInt32? { first { if case .sessionExpiryInterval(let v) = $0 { v } else { nil } } }
    /// Receive Maximum (0x21), if present: QoS 1 and 2 messages the sender takes in flight.
    public var receiveMaximum: UInt16? { first { if case .receiveMaximum(let v) = $0 { v } else { nil } } }
    /// Maximum Packet Size (0x27) in bytes, if present (CONNECT, CONNACK).
    public var maximumPacketSize: UInt32? { first { if case .maximumPacketSize(let v) = $0 { v } else { nil } } }
    /// Topic Alias Maximum (0x22), if present: the highest alias the sender accepts.
    public var topicAliasMaximum: UInt16? { first { if case .topicAliasMaximum(let v) = $0 { v } else { nil } } }
    /// Topic Alias (0x23) of a PUBLISH, if present.
    public var topicAlias: UInt16? { first { if case .topicAlias(let v) = $0 { v } else { nil } } }
    /// Will Delay Interval (0x18) in seconds, if present in will properties.
    public var willDelayInterval: UInt32? { first { if case .willDelayInterval(let v) = $0 { v } else { nil } } }
    /// Message Expiry Interval (0x02) in seconds, if present (PUBLISH, will).
    public var messageExpiryInterval: UInt32? { first { if case .messageExpiryInterval(let v) = $0 { v } else { nil } } }
    /// Maximum QoS (0x24) of a CONNACK, if present; absent means QoS 2 is accepted.
    public var maximumQoS: UInt8? { first { if case .maximumQoS(let v) = $0 { v } else { nil } } }
    /// Retain Available (0x25) of a CONNACK, if present; absent means retain is supported.
    public var retainAvailable: UInt8? { first { if case .retainAvailable(let v) = $0 { v } else { nil } } }
    /// Server Keep Alive (0x13) of a CONNACK, if present: the keep-alive the client must use.
    public var serverKeepAlive: UInt16? { first { if case .serverKeepAlive(let v) = $0 { v } else { nil } } }
    /// Assigned Client Identifier (0x12) of a CONNACK, if the server chose one.
    public var assignedClientIdentifier: String? { first { if case .assignedClientIdentifier(let v) = $0 { v } else { nil } } }
    /// Reason String (0x1F), if present: human-readable detail of the reason code.
    public var reasonString: String? { first { if case .reasonString(let v) = $0 { v } else { nil } } }
    /// Response Topic (0x08), if present (PUBLISH, will).
    public var responseTopic: String? { first { if case .responseTopic(let v) = $0 { v } else { nil } } }
    /// Correlation Data (0x09), if present (PUBLISH, will).
    public var correlationData: [UInt8]? { first { if case .correlationData(let v) = $0 { v } else { nil } } }
    /// Authentication Method (0x15), if present (CONNECT, CONNACK, AUTH).
    public var authenticationMethod: String? { first { if case .authenticationMethod(let v) = $0 { v } else { nil } } }
    /// Every Subscription Identifier (0x0B), in order; empty when there is none.
    public var subscriptionIdentifiers: [Int] { list.compactMap { if case .subscriptionIdentifier(let v) = $0 { v } else { nil } } }
    /// Every User Property (0x26) as name and value, in order; names may repeat.
    public var userProperties: [(String, String)] { list.compactMap { if case .userProperty(let k, let v) = $0 { (k, v) } else { nil } } }

    private func first<T>(_ extract: (MQTTProperty) -> T?) -> T? {
        for property in list { if let value = extract(property) { return value } }
        return nil
    }

    // MARK: Wire format

    /// Bytes of the property list, without its length prefix.
    func encodedLength() -> Int {
        var length = 0
        for property in list {
            length += 1
            switch property {
            case .payloadFormatIndicator, .requestProblemInformation, .requestResponseInformation, .maximumQoS, .retainAvailable,
                .wildcardSubscriptionAvailable, .subscriptionIdentifierAvailable, .sharedSubscriptionAvailable:
                length += 1
            case .serverKeepAlive, .receiveMaximum, .topicAliasMaximum, .topicAlias:
                length += 2
            case .messageExpiryInterval, .sessionExpiryInterval, .willDelayInterval, .maximumPacketSize:
                length += 4
            case .subscriptionIdentifier(let value):
                length += ByteBuffer.mqttVarintSize(value)
            case .contentType(let s), .responseTopic(let s), .assignedClientIdentifier(let s), .authenticationMethod(let s),
                .responseInformation(let s), .serverReference(let s), .reasonString(let s):
                length += 2 + s.utf8.count
            case .correlationData(let b), .authenticationData(let b):
                length += 2 + b.count
            case .userProperty(let k, let v):
                length += 4 + k.utf8.count + v.utf8.count
            }
        }
        return length
    }

    func write(to buffer: inout ByteBuffer) throws(MQTTError) {
        buffer.mqttWriteVarint(encodedLength())
        for property in list {
            buffer.writeInteger(property.identifier)
            switch property {
            case .payloadFormatIndicator(let v), .requestProblemInformation(let v), .requestResponseInformation(let v), .maximumQoS(let v),
                .retainAvailable(let v), .wildcardSubscriptionAvailable(let v), .subscriptionIdentifierAvailable(let v),
                .sharedSubscriptionAvailable(let v):
                buffer.writeInteger(v)
            case .serverKeepAlive(let v), .receiveMaximum(let v), .topicAliasMaximum(let v), .topicAlias(let v):
                buffer.writeInteger(v)
            case .messageExpiryInterval(let v), .sessionExpiryInterval(let v), .willDelayInterval(let v), .maximumPacketSize(let v):
                buffer.writeInteger(v)
            case .subscriptionIdentifier(let v):
                guard v > 0, v <= 268_435_455 else { throw MQTTError(.invalidArgument, "subscription identifier \(v) is outside 1…268,435,455") }
                buffer.mqttWriteVarint(v)
            case .contentType(let s), .responseTopic(let s), .assignedClientIdentifier(let s), .authenticationMethod(let s),
                .responseInformation(let s), .serverReference(let s), .reasonString(let s):
                try buffer.mqttWriteString(s, "property 0x\(String(property.identifier, radix: 16))")
            case .correlationData(let b), .authenticationData(let b):
                try buffer.mqttWriteBinary(b, "property 0x\(String(property.identifier, radix: 16))")
            case .userProperty(let k, let v):
                try buffer.mqttWriteString(k, "user property name")
                try buffer.mqttWriteString(v, "user property value")
            }
        }
    }

    static func read(from buffer: inout ByteBuffer, context: MQTTPropertyContext) throws(MQTTError) -> MQTTProperties {
        let length = try buffer.mqttReadVarint()
        guard var slice = buffer.readSlice(length: length) else { throw .malformed("\(context.rawValue) properties are truncated") }
        var list: [MQTTProperty] = []
        var seen = Set<UInt8>()
        while slice.readableBytes > 0 {
            let identifier = try slice.mqttReadVarint()
            guard identifier <= 0x7F, let id = UInt8(exactly: identifier), context.allows(id) else {
                throw .protocolError("property 0x\(String(identifier, radix: 16)) is not allowed in \(context.rawValue)")
            }
            let repeatable = id == 0x26 || (id == 0x0B && context == .publish)
            guard repeatable || seen.insert(id).inserted else {
                throw .protocolError("property 0x\(String(id, radix: 16)) appears twice in \(context.rawValue)")
            }
            let property = try readValue(id, from: &slice)
            try validate(property)
            list.append(property)
        }
        return MQTTProperties(list)
    }

    private static func readValue(_ id: UInt8, from slice: inout ByteBuffer) throws(MQTTError) -> MQTTProperty {
        let field = "property 0x\(String(id, radix: 16))"
        switch id {
        case 0x01: return .payloadFormatIndicator(try slice.mqttReadByte(field))
        case 0x02: return .messageExpiryInterval(try slice.mqttReadUInt32(field))
        case 0x03: return .contentType(try slice.mqttReadString(field))
        case 0x08: return .responseTopic(try slice.mqttReadString(field))
        case 0x09: return .correlationData(try slice.mqttReadBinary(field))
        case 0x0B: return .subscriptionIdentifier(try slice.mqttReadVarint())
        case 0x11: return .sessionExpiryInterval(try slice.mqttReadUInt32(field))
        case 0x12: return .assignedClientIdentifier(try slice.mqttReadString(field))
        case 0x13: return .serverKeepAlive(try slice.mqttReadUInt16(field))
        case 0x15: return .authenticationMethod(try slice.mqttReadString(field))
        case 0x16: return .authenticationData(try slice.mqttReadBinary(field))
        case 0x17: return .requestProblemInformation(try slice.mqttReadByte(field))
        case 0x18: return .willDelayInterval(try slice.mqttReadUInt32(field))
        case 0x19: return .requestResponseInformation(try slice.mqttReadByte(field))
        case 0x1A: return .responseInformation(try slice.mqttReadString(field))
        case 0x1C: return .serverReference(try slice.mqttReadString(field))
        case 0x1F: return .reasonString(try slice.mqttReadString(field))
        case 0x21: return .receiveMaximum(try slice.mqttReadUInt16(field))
        case 0x22: return .topicAliasMaximum(try slice.mqttReadUInt16(field))
        case 0x23: return .topicAlias(try slice.mqttReadUInt16(field))
        case 0x24: return .maximumQoS(try slice.mqttReadByte(field))
        case 0x25: return .retainAvailable(try slice.mqttReadByte(field))
        case 0x26: return .userProperty(try slice.mqttReadString("user property name"), try slice.mqttReadString("user property value"))
        case 0x27: return .maximumPacketSize(try slice.mqttReadUInt32(field))
        case 0x28: return .wildcardSubscriptionAvailable(try slice.mqttReadByte(field))
        case 0x29: return .subscriptionIdentifierAvailable(try slice.mqttReadByte(field))
        case 0x2A: return .sharedSubscriptionAvailable(try slice.mqttReadByte(field))
        default: throw .protocolError("unknown property 0x\(String(id, radix: 16))")
        }
    }

    private static func validate(_ property: MQTTProperty) throws(MQTTError) {
        switch property {
        case .payloadFormatIndicator(let v), .requestProblemInformation(let v), .requestResponseInformation(let v), .maximumQoS(let v),
            .retainAvailable(let v), .wildcardSubscriptionAvailable(let v), .subscriptionIdentifierAvailable(let v),
            .sharedSubscriptionAvailable(let v):
            guard v <= 1 else { throw .protocolError("property 0x\(String(property.identifier, radix: 16)) must be 0 or 1, not \(v)") }
        case .receiveMaximum(0), .topicAlias(0):
            throw .protocolError("property 0x\(String(property.identifier, radix: 16)) must not be 0")
        case .maximumPacketSize(0):
            throw .protocolError("maximum packet size must not be 0")
        case .subscriptionIdentifier(0):
            throw .protocolError("subscription identifier must not be 0")
        default:
            break
        }
    }
}

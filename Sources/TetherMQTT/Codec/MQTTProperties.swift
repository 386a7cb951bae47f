import NIOCore

/// One MQTT 5 property (MQTT 5.0 §2.2.2.2).
public enum MQTTProperty: Hashable, Sendable {
    case payloadFormatIndicator(UInt8)
    case messageExpiryInterval(UInt32)
    case contentType(String)
    case responseTopic(String)
    case correlationData([UInt8])
    case subscriptionIdentifier(Int)
    case sessionExpiryInterval(UInt32)
    case assignedClientIdentifier(String)
    case serverKeepAlive(UInt16)
    case authenticationMethod(String)
    case authenticationData([UInt8])
    case requestProblemInformation(UInt8)
    case willDelayInterval(UInt32)
    case requestResponseInformation(UInt8)
    case responseInformation(String)
    case serverReference(String)
    case reasonString(String)
    case receiveMaximum(UInt16)
    case topicAliasMaximum(UInt16)
    case topicAlias(UInt16)
    case maximumQoS(UInt8)
    case retainAvailable(UInt8)
    case userProperty(String, String)
    case maximumPacketSize(UInt32)
    case wildcardSubscriptionAvailable(UInt8)
    case subscriptionIdentifierAvailable(UInt8)
    case sharedSubscriptionAvailable(UInt8)

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
    public var list: [MQTTProperty]

    public init(_ list: [MQTTProperty] = []) { self.list = list }
    public init(arrayLiteral elements: MQTTProperty...) { self.list = elements }

    public var isEmpty: Bool { list.isEmpty }

    public var sessionExpiryInterval: UInt32? { first { if case .sessionExpiryInterval(let v) = $0 { v } else { nil } } }
    public var receiveMaximum: UInt16? { first { if case .receiveMaximum(let v) = $0 { v } else { nil } } }
    public var maximumPacketSize: UInt32? { first { if case .maximumPacketSize(let v) = $0 { v } else { nil } } }
    public var topicAliasMaximum: UInt16? { first { if case .topicAliasMaximum(let v) = $0 { v } else { nil } } }
    public var topicAlias: UInt16? { first { if case .topicAlias(let v) = $0 { v } else { nil } } }
    public var willDelayInterval: UInt32? { first { if case .willDelayInterval(let v) = $0 { v } else { nil } } }
    public var messageExpiryInterval: UInt32? { first { if case .messageExpiryInterval(let v) = $0 { v } else { nil } } }
    public var maximumQoS: UInt8? { first { if case .maximumQoS(let v) = $0 { v } else { nil } } }
    public var retainAvailable: UInt8? { first { if case .retainAvailable(let v) = $0 { v } else { nil } } }
    public var serverKeepAlive: UInt16? { first { if case .serverKeepAlive(let v) = $0 { v } else { nil } } }
    public var assignedClientIdentifier: String? { first { if case .assignedClientIdentifier(let v) = $0 { v } else { nil } } }
    public var reasonString: String? { first { if case .reasonString(let v) = $0 { v } else { nil } } }
    public var responseTopic: String? { first { if case .responseTopic(let v) = $0 { v } else { nil } } }
    public var correlationData: [UInt8]? { first { if case .correlationData(let v) = $0 { v } else { nil } } }
    public var authenticationMethod: String? { first { if case .authenticationMethod(let v) = $0 { v } else { nil } } }
    public var subscriptionIdentifiers: [Int] { list.compactMap { if case .subscriptionIdentifier(let v) = $0 { v } else { nil } } }
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

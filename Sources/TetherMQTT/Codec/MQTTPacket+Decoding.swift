public import NIOCore
import TetherCore

extension MQTTPacket {
    /// Reads one packet from a stream. Returns nil, without moving the reader index, when the
    /// packet is not complete yet. Throws when the bytes cannot be a valid packet, and before
    /// buffering anything when the declared size exceeds `maximumPacketSize`.
    ///
    /// - Parameter version: the connection's protocol level; nil before CONNECT (a server's
    ///   first packet), when only CONNECT is accepted.
    public static func read(from buffer: inout ByteBuffer, version: MQTTVersion?, maximumPacketSize: Int = 268_435_460) throws(MQTTError) -> MQTTPacket? {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self) else { return nil }
        guard case let .value(remaining, byteCount: lengthBytes) = try buffer.mqttGetVarint(at: start + 1) else { return nil }
        let total = 1 + lengthBytes + remaining
        guard total <= maximumPacketSize else {
            throw MQTTError(.packetTooLarge, "a packet of \(total) bytes exceeds the maximum of \(maximumPacketSize)", reasonCode: .packetTooLarge)
        }
        guard buffer.readableBytes >= total else { return nil }
        var body = buffer.getSlice(at: start + 1 + lengthBytes, length: remaining)!
        let packet = try decode(type: first >> 4, flags: first & 0x0F, body: &body, version: version)
        guard body.readableBytes == 0 else {
            throw .malformed("\(packet.name) has \(body.readableBytes) bytes after its last field")
        }
        buffer.moveReaderIndex(to: start + total)
        return packet
    }

    private static func decode(type: UInt8, flags: UInt8, body: inout ByteBuffer, version: MQTTVersion?) throws(MQTTError) -> MQTTPacket {
        if type == 1 {
            guard flags == 0 else { throw .malformed("CONNECT has reserved flags set") }
            return .connect(try readConnect(&body))
        }
        guard let version else { throw .protocolError("the first packet must be CONNECT") }
        let v5 = version == .v5
        func requireFlags(_ expected: UInt8, _ name: String) throws(MQTTError) {
            guard flags == expected else { throw .malformed("\(name) has invalid fixed-header flags 0x\(String(flags, radix: 16))") }
        }
        switch type {
        case 2:
            try requireFlags(0, "CONNACK")
            let acknowledge = try body.mqttReadByte("CONNACK flags")
            guard acknowledge & 0xFE == 0 else { throw .malformed("CONNACK has reserved flags set") }
            let code = try body.mqttReadByte("CONNACK reason code")
            if !v5, code > 5 { throw .malformed("CONNACK return code \(code) is reserved in MQTT 3.1.1") }
            return .connack(
                MQTTConnAck(
                    sessionPresent: acknowledge & 1 == 1,
                    reasonCode: v5 ? MQTTReasonCode(rawValue: code) : MQTTReasonCode(v311ConnectReturnCode: code),
                    properties: v5 ? try MQTTProperties.read(from: &body, context: .connack) : []
                ))
        case 3:
            return .publish(try readPublish(flags: flags, body: &body, v5: v5))
        case 4, 5, 7:
            try requireFlags(0, "acknowledgement")
            let ack = try readAck(&body, v5: v5)
            return type == 4 ? .puback(ack) : type == 5 ? .pubrec(ack) : .pubcomp(ack)
        case 6:
            try requireFlags(2, "PUBREL")
            return .pubrel(try readAck(&body, v5: v5))
        case 8:
            try requireFlags(2, "SUBSCRIBE")
            return .subscribe(try readSubscribe(&body, v5: v5))
        case 9:
            try requireFlags(0, "SUBACK")
            let packetID = try body.mqttReadUInt16("packet identifier")
            let properties = v5 ? try MQTTProperties.read(from: &body, context: .suback) : []
            var codes: [MQTTReasonCode] = []
            while body.readableBytes > 0 { codes.append(MQTTReasonCode(rawValue: try body.mqttReadByte("reason code"))) }
            guard !codes.isEmpty else { throw .protocolError("SUBACK without reason codes") }
            return .suback(MQTTSubAck(packetID: packetID, reasonCodes: codes, properties: properties))
        case 10:
            try requireFlags(2, "UNSUBSCRIBE")
            let packetID = try body.mqttReadUInt16("packet identifier")
            let properties = v5 ? try MQTTProperties.read(from: &body, context: .unsubscribe) : []
            var filters: [String] = []
            while body.readableBytes > 0 {
                let filter = try body.mqttReadString("topic filter")
                try validateFilter(filter)
                filters.append(filter)
            }
            guard !filters.isEmpty else { throw .protocolError("UNSUBSCRIBE without topic filters") }
            return .unsubscribe(MQTTUnsubscribe(packetID: packetID, filters: filters, properties: properties))
        case 11:
            try requireFlags(0, "UNSUBACK")
            let packetID = try body.mqttReadUInt16("packet identifier")
            guard v5 else { return .unsuback(MQTTSubAck(packetID: packetID, reasonCodes: [])) }
            let properties = try MQTTProperties.read(from: &body, context: .unsuback)
            var codes: [MQTTReasonCode] = []
            while body.readableBytes > 0 { codes.append(MQTTReasonCode(rawValue: try body.mqttReadByte("reason code"))) }
            return .unsuback(MQTTSubAck(packetID: packetID, reasonCodes: codes, properties: properties))
        case 12, 13:
            try requireFlags(0, type == 12 ? "PINGREQ" : "PINGRESP")
            return type == 12 ? .pingreq : .pingresp
        case 14:
            try requireFlags(0, "DISCONNECT")
            return .disconnect(try readReasonPacket(&body, v5: v5, context: .disconnect))
        case 15 where v5:
            try requireFlags(0, "AUTH")
            return .auth(try readReasonPacket(&body, v5: v5, context: .auth))
        default:
            throw .malformed("packet type \(type) is reserved")
        }
    }

    private static func readConnect(_ body: inout ByteBuffer) throws(MQTTError) -> MQTTConnect {
        let name = try body.mqttReadString("protocol name")
        let level = try body.mqttReadByte("protocol level")
        guard let version = MQTTVersion(rawValue: level), name == version.protocolName else {
            throw MQTTError(.unsupportedProtocolVersion, "protocol \(name) level \(level) is not MQTT 3.1, 3.1.1 or 5", reasonCode: .unsupportedProtocolVersion)
        }
        let flags = try body.mqttReadByte("connect flags")
        guard flags & 0x01 == 0 else { throw .malformed("CONNECT reserved flag is set") }
        let hasWill = flags & 0x04 != 0
        let willQoSBits = (flags >> 3) & 0x03
        guard let willQoS = MQTTQoS(rawValue: willQoSBits) else { throw .malformed("will QoS 3 is invalid") }
        let willRetain = flags & 0x20 != 0
        if !hasWill, willQoSBits != 0 || willRetain { throw .malformed("will QoS or retain set without a will") }
        let hasUsername = flags & 0x80 != 0
        let hasPassword = flags & 0x40 != 0
        if version != .v5, hasPassword, !hasUsername { throw .malformed("a password without a user name") }
        let keepAlive = try body.mqttReadUInt16("keep alive")
        let properties = version == .v5 ? try MQTTProperties.read(from: &body, context: .connect) : []
        let clientID = try body.mqttReadString("client identifier")
        var will: MQTTWill?
        if hasWill {
            let willProperties = version == .v5 ? try MQTTProperties.read(from: &body, context: .will) : []
            let topic = try body.mqttReadString("will topic")
            try validateName(topic)
            let payload = try body.mqttReadBinary("will payload")
            will = MQTTWill(topic: topic, payload: ByteBuffer(bytes: payload), qos: willQoS, retain: willRetain, properties: willProperties)
        }
        let username = hasUsername ? try body.mqttReadString("user name") : nil
        let password = hasPassword ? try body.mqttReadBinary("password") : nil
        return MQTTConnect(
            version: version, clientID: clientID, cleanStart: flags & 0x02 != 0, keepAlive: keepAlive, username: username, password: password, will: will,
            properties: properties)
    }

    private static func readPublish(flags: UInt8, body: inout ByteBuffer, v5: Bool) throws(MQTTError) -> MQTTPublish {
        guard let qos = MQTTQoS(rawValue: (flags >> 1) & 0x03) else { throw .malformed("PUBLISH with QoS 3") }
        let dup = flags & 0x08 != 0
        if dup, qos == .atMostOnce { throw .malformed("DUP set on a QoS 0 PUBLISH") }
        let topic = try body.mqttReadString("topic name")
        let packetID = qos == .atMostOnce ? nil : try body.mqttReadUInt16("packet identifier")
        if packetID == 0 { throw .malformed("packet identifier 0") }
        let properties = v5 ? try MQTTProperties.read(from: &body, context: .publish) : []
        if topic.isEmpty {
            // v5 lets a topic alias stand for the name; 3.1.1 never allows an empty name.
            guard v5, properties.topicAlias != nil else { throw MQTTError(.malformedPacket, "PUBLISH with an empty topic name", reasonCode: .topicNameInvalid) }
        } else {
            try validateName(topic)
        }
        let payload = body.readSlice(length: body.readableBytes)!
        return MQTTPublish(topic: topic, payload: payload, qos: qos, retain: flags & 0x01 != 0, dup: dup, packetID: packetID, properties: properties)
    }

    private static func readAck(_ body: inout ByteBuffer, v5: Bool) throws(MQTTError) -> MQTTAck {
        let packetID = try body.mqttReadUInt16("packet identifier")
        if packetID == 0 { throw .malformed("packet identifier 0") }
        guard v5, body.readableBytes > 0 else { return MQTTAck(packetID: packetID) }
        let code = MQTTReasonCode(rawValue: try body.mqttReadByte("reason code"))
        let properties = body.readableBytes > 0 ? try MQTTProperties.read(from: &body, context: .ack) : []
        return MQTTAck(packetID: packetID, reasonCode: code, properties: properties)
    }

    private static func readSubscribe(_ body: inout ByteBuffer, v5: Bool) throws(MQTTError) -> MQTTSubscribe {
        let packetID = try body.mqttReadUInt16("packet identifier")
        if packetID == 0 { throw .malformed("packet identifier 0") }
        let properties = v5 ? try MQTTProperties.read(from: &body, context: .subscribe) : []
        var subscriptions: [MQTTTopicSubscription] = []
        while body.readableBytes > 0 {
            let filter = try body.mqttReadString("topic filter")
            try validateFilter(filter)
            let options = try body.mqttReadByte("subscription options")
            guard let qos = MQTTQoS(rawValue: options & 0x03) else { throw .malformed("subscription with QoS 3") }
            if v5 {
                guard options & 0xC0 == 0, let handling = MQTTTopicSubscription.RetainHandling(rawValue: (options >> 4) & 0x03) else {
                    throw .malformed("invalid subscription options 0x\(String(options, radix: 16))")
                }
                subscriptions.append(
                    MQTTTopicSubscription(
                        filter: filter, qos: qos, noLocal: options & 0x04 != 0, retainAsPublished: options & 0x08 != 0, retainHandling: handling))
            } else {
                guard options & 0xFC == 0 else { throw .malformed("reserved bits set in subscription options") }
                subscriptions.append(MQTTTopicSubscription(filter: filter, qos: qos))
            }
        }
        guard !subscriptions.isEmpty else { throw .protocolError("SUBSCRIBE without topic filters") }
        return MQTTSubscribe(packetID: packetID, subscriptions: subscriptions, properties: properties)
    }

    private static func readReasonPacket(_ body: inout ByteBuffer, v5: Bool, context: MQTTPropertyContext) throws(MQTTError) -> MQTTReasonPacket {
        guard v5, body.readableBytes > 0 else { return MQTTReasonPacket() }
        let code = MQTTReasonCode(rawValue: try body.mqttReadByte("reason code"))
        let properties = body.readableBytes > 0 ? try MQTTProperties.read(from: &body, context: context) : []
        return MQTTReasonPacket(reasonCode: code, properties: properties)
    }

    /// Wildcards in a received topic name are a malformed packet, not an argument error.
    private static func validateName(_ topic: String) throws(MQTTError) {
        do { try MQTTTopic.validateName(topic) } catch { throw MQTTError(.malformedPacket, error.message, reasonCode: .topicNameInvalid) }
    }

    private static func validateFilter(_ filter: String) throws(MQTTError) {
        do { try MQTTTopic.validateFilter(filter) } catch { throw MQTTError(.malformedPacket, error.message, reasonCode: .topicFilterInvalid) }
    }
}

public import NIOCore

extension MQTTPacket {
    /// Appends the packet in the wire format of `version`. Throws `MQTTError.Code.invalidArgument`
    /// for values the format cannot carry (a string over 65,535 bytes, a packet over 256 MB).
    public func write(to buffer: inout ByteBuffer, version: MQTTVersion) throws(MQTTError) {
        let v5 = version == .v5
        switch self {
        case .publish(let publish):
            try Self.writePublish(publish, v5: v5, to: &buffer)
        case .puback(let ack), .pubrec(let ack), .pubcomp(let ack):
            try Self.writeAck(ack, header: type << 4, v5: v5, to: &buffer)
        case .pubrel(let ack):
            try Self.writeAck(ack, header: type << 4 | 0x02, v5: v5, to: &buffer)
        case .pingreq, .pingresp:
            buffer.writeInteger(type << 4)
            buffer.writeInteger(UInt8(0))
        default:
            var body = ByteBuffer()
            try writeBody(to: &body, v5: v5)
            try Self.writeFixedHeader(type << 4 | (self.requiresFlags0010 ? 0x02 : 0), remainingLength: body.readableBytes, to: &buffer)
            buffer.writeBuffer(&body)
        }
    }

    /// The packet in the wire format of `version`, as a new buffer.
    public func bytes(version: MQTTVersion) throws(MQTTError) -> ByteBuffer {
        var buffer = ByteBuffer()
        try write(to: &buffer, version: version)
        return buffer
    }

    var requiresFlags0010: Bool {
        switch self {
        case .pubrel, .subscribe, .unsubscribe: return true
        default: return false
        }
    }

    static func writeFixedHeader(_ byte: UInt8, remainingLength: Int, to buffer: inout ByteBuffer) throws(MQTTError) {
        guard remainingLength <= 268_435_455 else {
            throw MQTTError(.invalidArgument, "a packet of \(remainingLength) bytes exceeds MQTT's 268,435,455")
        }
        buffer.writeInteger(byte)
        buffer.mqttWriteVarint(remainingLength)
    }

    private static func writePublish(_ publish: MQTTPublish, v5: Bool, to buffer: inout ByteBuffer) throws(MQTTError) {
        var flags: UInt8 = publish.qos.rawValue << 1
        if publish.dup { flags |= 0x08 }
        if publish.retain { flags |= 0x01 }
        let propertiesLength = v5 ? publish.properties.encodedLength() : 0
        let topicLength = publish.topic.utf8.count
        var remaining = 2 + topicLength + publish.payload.readableBytes
        if publish.qos != .atMostOnce { remaining += 2 }
        if v5 { remaining += ByteBuffer.mqttVarintSize(propertiesLength) + propertiesLength }
        try writeFixedHeader(0x30 | flags, remainingLength: remaining, to: &buffer)
        try buffer.mqttWriteString(publish.topic, "topic name")
        if publish.qos != .atMostOnce {
            guard let packetID = publish.packetID, packetID != 0 else {
                throw MQTTError(.invalidArgument, "a QoS \(publish.qos.rawValue) PUBLISH needs a non-zero packet identifier")
            }
            buffer.writeInteger(packetID)
        }
        if v5 { try publish.properties.write(to: &buffer) }
        var payload = publish.payload
        buffer.writeBuffer(&payload)
    }

    private static func writeAck(_ ack: MQTTAck, header: UInt8, v5: Bool, to buffer: inout ByteBuffer) throws(MQTTError) {
        guard v5, ack.reasonCode != .success || !ack.properties.isEmpty else {
            buffer.writeInteger(header)
            buffer.writeInteger(UInt8(2))
            buffer.writeInteger(ack.packetID)
            return
        }
        let propertiesLength = ack.properties.encodedLength()
        let remaining = ack.properties.isEmpty ? 3 : 3 + ByteBuffer.mqttVarintSize(propertiesLength) + propertiesLength
        try writeFixedHeader(header, remainingLength: remaining, to: &buffer)
        buffer.writeInteger(ack.packetID)
        buffer.writeInteger(ack.reasonCode.rawValue)
        if !ack.properties.isEmpty { try ack.properties.write(to: &buffer) }
    }

    private func writeBody(to body: inout ByteBuffer, v5: Bool) throws(MQTTError) {
        switch self {
        case .connect(let connect):
            try Self.writeConnect(connect, to: &body)
        case .connack(let connack):
            body.writeInteger(UInt8(connack.sessionPresent ? 1 : 0))
            body.writeInteger(v5 ? connack.reasonCode.rawValue : connack.reasonCode.v311ConnectReturnCode)
            if v5 { try connack.properties.write(to: &body) }
        case .subscribe(let subscribe):
            body.writeInteger(subscribe.packetID)
            if v5 { try subscribe.properties.write(to: &body) }
            for subscription in subscribe.subscriptions {
                try body.mqttWriteString(subscription.filter, "topic filter")
                var options = subscription.qos.rawValue
                if v5 {
                    if subscription.noLocal { options |= 0x04 }
                    if subscription.retainAsPublished { options |= 0x08 }
                    options |= subscription.retainHandling.rawValue << 4
                }
                body.writeInteger(options)
            }
        case .suback(let suback):
            body.writeInteger(suback.packetID)
            if v5 { try suback.properties.write(to: &body) }
            for code in suback.reasonCodes { body.writeInteger(code.rawValue) }
        case .unsubscribe(let unsubscribe):
            body.writeInteger(unsubscribe.packetID)
            if v5 { try unsubscribe.properties.write(to: &body) }
            for filter in unsubscribe.filters { try body.mqttWriteString(filter, "topic filter") }
        case .unsuback(let unsuback):
            body.writeInteger(unsuback.packetID)
            if v5 {
                try unsuback.properties.write(to: &body)
                for code in unsuback.reasonCodes { body.writeInteger(code.rawValue) }
            }
        case .disconnect(let packet), .auth(let packet):
            // The short forms: no body when all is default (3.1.1 always).
            guard v5, packet.reasonCode != .success || !packet.properties.isEmpty else { return }
            body.writeInteger(packet.reasonCode.rawValue)
            if !packet.properties.isEmpty { try packet.properties.write(to: &body) }
        case .publish, .puback, .pubrec, .pubrel, .pubcomp, .pingreq, .pingresp:
            preconditionFailure("written without a body buffer")
        }
    }

    private static func writeConnect(_ connect: MQTTConnect, to body: inout ByteBuffer) throws(MQTTError) {
        try body.mqttWriteString(connect.version.protocolName, "protocol name")
        body.writeInteger(connect.version.rawValue)
        var flags: UInt8 = 0
        if connect.username != nil { flags |= 0x80 }
        if connect.password != nil { flags |= 0x40 }
        if let will = connect.will {
            flags |= 0x04 | will.qos.rawValue << 3
            if will.retain { flags |= 0x20 }
        }
        if connect.cleanStart { flags |= 0x02 }
        body.writeInteger(flags)
        body.writeInteger(connect.keepAlive)
        if connect.version == .v5 { try connect.properties.write(to: &body) }
        try body.mqttWriteString(connect.clientID, "client identifier")
        if let will = connect.will {
            if connect.version == .v5 { try will.properties.write(to: &body) }
            try body.mqttWriteString(will.topic, "will topic")
            try body.mqttWriteBinary(will.payload.readableBytesView, "will payload")
        }
        if let username = connect.username { try body.mqttWriteString(username, "user name") }
        if let password = connect.password { try body.mqttWriteBinary(password, "password") }
    }
}

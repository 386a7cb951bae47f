public import NIOCore

/// Splits a byte stream into MQTT packets. A server's decoder starts without a version and
/// learns it from CONNECT; a client's is given its version.
public struct MQTTPacketDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = MQTTPacket

    public var version: MQTTVersion?
    public var maximumPacketSize: Int

    public init(version: MQTTVersion? = nil, maximumPacketSize: Int = 268_435_460) {
        self.version = version
        self.maximumPacketSize = maximumPacketSize
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> MQTTPacket? {
        let packet = try MQTTPacket.read(from: &buffer, version: version, maximumPacketSize: maximumPacketSize)
        if version == nil, case .connect(let connect)? = packet { version = connect.version }
        return packet
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> MQTTPacket? {
        try decode(buffer: &buffer)
    }
}

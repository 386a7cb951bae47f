public import NIOCore

/// Splits a byte stream into MQTT packets. A server's decoder starts without a version and
/// learns it from CONNECT; a client's is given its version.
public struct MQTTPacketDecoder: NIOSingleStepByteToMessageDecoder {
    /// Each decoded value is one whole ``MQTTPacket``.
    public typealias InboundOut = MQTTPacket

    /// The protocol level to decode with; nil until a server's decoder reads CONNECT.
    public var version: MQTTVersion?
    /// Largest whole packet accepted, in bytes; a larger declared size throws
    /// `MQTTError.Code.packetTooLarge` before anything is buffered.
    public var maximumPacketSize: Int

    /// Builds a decoder; the default maximum is the largest packet MQTT can express
    /// (268,435,460 bytes).
    public init(version: MQTTVersion? = nil, maximumPacketSize: Int = 268_435_460) {
        self.version = version
        self.maximumPacketSize = maximumPacketSize
    }

    /// The next packet once it is complete, or nil; the first CONNECT sets ``version``.
    /// Throws ``MQTTError`` for bytes that cannot be a valid packet.
    public mutating func decode(buffer: inout ByteBuffer) throws -> MQTTPacket? {
        let packet = try MQTTPacket.read(from: &buffer, version: version, maximumPacketSize: maximumPacketSize)
        if version == nil, case .connect(let connect)? = packet { version = connect.version }
        return packet
    }

    /// At the end of the stream, decodes a remaining complete packet like ``decode(buffer:)``.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> MQTTPacket? {
        try decode(buffer: &buffer)
    }
}

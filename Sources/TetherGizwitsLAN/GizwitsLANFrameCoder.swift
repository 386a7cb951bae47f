public import NIOCore
import TetherCore

/// Splits a TCP byte stream into GAgent frames. Partial frames wait for more bytes; malformed
/// ones raise a ``TetherError`` (which closes the channel when unhandled); frames above
/// `maximumLength` are refused before their bytes are buffered.
public struct GizwitsLANFrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = GizwitsLANFrame

    public let maximumLength: Int

    public init(maximumLength: Int = GizwitsLANFrame.defaultMaximumFrameLength) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> GizwitsLANFrame? {
        try GizwitsLANFrame.read(from: &buffer, maximumLength: maximumLength)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> GizwitsLANFrame? {
        // A partial frame at end of stream is dropped: the connection is gone and the owner
        // reports that; there is nothing to deliver.
        try decode(buffer: &buffer)
    }
}

/// Writes GAgent frames.
public struct GizwitsLANFrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = GizwitsLANFrame

    public init() {}

    public func encode(data: GizwitsLANFrame, out: inout ByteBuffer) throws {
        data.write(to: &out)
    }
}

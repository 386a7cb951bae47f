public import NIOCore
import TetherCore

/// Splits a TCP byte stream into GAgent frames. Partial frames wait for more bytes; malformed
/// ones raise a `TetherError` (which closes the channel when unhandled); frames above
/// `maximumLength` are refused before their bytes are buffered.
public struct GizwitsLANFrameDecoder: NIOSingleStepByteToMessageDecoder {
    /// The decoder passes whole frames to the next handler.
    public typealias InboundOut = GizwitsLANFrame

    /// The largest `len` accepted; a larger one throws `TetherError.Code.frameTooLarge`.
    public let maximumLength: Int

    /// A decoder that refuses frames whose `len` exceeds `maximumLength`.
    public init(maximumLength: Int = GizwitsLANFrame.defaultMaximumFrameLength) {
        self.maximumLength = maximumLength
    }

    /// The next complete frame, or nil until all its bytes have arrived; throws when the bytes
    /// cannot start a valid frame.
    public mutating func decode(buffer: inout ByteBuffer) throws -> GizwitsLANFrame? {
        try GizwitsLANFrame.read(from: &buffer, maximumLength: maximumLength)
    }

    /// Like ``decode(buffer:)`` at the end of the stream; a partial frame left over is dropped.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> GizwitsLANFrame? {
        // A partial frame at end of stream is dropped: the connection is gone and the owner
        // reports that; there is nothing to deliver.
        try decode(buffer: &buffer)
    }
}

/// Writes GAgent frames.
public struct GizwitsLANFrameEncoder: MessageToByteEncoder {
    /// The encoder takes frames.
    public typealias OutboundIn = GizwitsLANFrame

    /// An encoder; it has no settings.
    public init() {}

    /// Appends the encoded frame to `out`.
    public func encode(data: GizwitsLANFrame, out: inout ByteBuffer) throws {
        data.write(to: &out)
    }
}

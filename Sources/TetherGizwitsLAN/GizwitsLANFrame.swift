public import NIOCore
public import TetherCore

/// One GAgent LAN frame: `00 00 00 03 | varint len | flag | cmd (u16 BE) | payload`, where `len`
/// counts the flag, the command and the payload (`shared/reference/gizwits-lan.md` §2).
public struct GizwitsLANFrame: Hashable, Sendable, CustomStringConvertible {
    /// The largest length a 4-byte varint can carry.
    public static let maximumLength = 268_435_455
    /// The protocol version word every frame starts with.
    public static let version: UInt32 = 3
    /// The default bound on `len` for decoders: far above any P0 status, far below memory trouble.
    public static let defaultMaximumFrameLength = 65_536

    /// Informational; GAgent writes 0, some devices set other values on unsolicited frames.
    public var flag: UInt8
    /// The command word, which says how to read the payload.
    public var command: GizwitsLANCommand
    /// The bytes after the command word; for `0x0093` and `0x0094` they begin with the 4-byte `sn`.
    public var payload: ByteBuffer

    /// A frame as given; `flag` defaults to 0, as GAgent writes it.
    public init(command: GizwitsLANCommand, payload: ByteBuffer = ByteBuffer(), flag: UInt8 = 0) {
        self.command = command
        self.payload = payload
        self.flag = flag
    }

    public var description: String {
        "GizwitsLANFrame(\(command), \(payload.readableBytes) payload bytes)"
    }

    /// Appends the encoded frame to `buffer`.
    public func write(to buffer: inout ByteBuffer) {
        buffer.writeInteger(Self.version)
        buffer.gizwitsWriteVarint(3 + payload.readableBytes)
        buffer.writeInteger(flag)
        buffer.writeInteger(command.rawValue)
        var payload = payload
        buffer.writeBuffer(&payload)
    }

    /// The encoded frame as a new buffer.
    public var bytes: ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(8 + payload.readableBytes)
        write(to: &buffer)
        return buffer
    }

    /// Reads one frame from a stream. Returns nil and leaves `buffer` untouched when the frame is
    /// not complete yet; throws when the bytes cannot be the start of a valid frame.
    ///
    /// Two GAgent replies are written with a length longer than what is sent (a refused
    /// passcode, `0x0007`, and hardware info, `0x0014`). Their payloads delimit themselves, so a
    /// frame of those commands is returned as soon as its payload is complete, whatever the
    /// declared length.
    public static func read(from buffer: inout ByteBuffer, maximumLength: Int = defaultMaximumFrameLength) throws(TetherError) -> GizwitsLANFrame? {
        let start = buffer.readerIndex
        // Reject garbage as soon as a byte differs from the version word.
        let prefix = min(4, buffer.readableBytes)
        for offset in 0..<prefix {
            let expected: UInt8 = offset == 3 ? 3 : 0
            guard buffer.getInteger(at: start + offset, as: UInt8.self) == expected else {
                throw TetherError(.unsupportedVersion, "frame does not start with the version word 00 00 00 03")
            }
        }
        guard prefix == 4 else { return nil }
        guard case let .value(length, byteCount: varintBytes) = try buffer.gizwitsGetVarint(at: start + 4) else { return nil }
        guard length >= 3 else {
            throw TetherError(.malformedFrame, "length \(length) is shorter than flag and command (3)")
        }
        guard length <= maximumLength else {
            throw TetherError(.frameTooLarge, "length \(length) exceeds the maximum of \(maximumLength)")
        }
        let headerEnd = start + 4 + varintBytes
        guard buffer.readableBytes >= 4 + varintBytes + 3 else { return nil }
        let flag = buffer.getInteger(at: headerEnd, as: UInt8.self)!
        let command = GizwitsLANCommand(rawValue: buffer.getInteger(at: headerEnd + 1, as: UInt16.self)!)
        let available = buffer.readableBytes - (4 + varintBytes + 3)
        var payloadLength = length - 3
        // GAgent declares a fixed, too long length for these two replies and sends fewer bytes:
        // trust their own lengths, or the next frame would be swallowed.
        let candidate = buffer.getSlice(at: headerEnd + 3, length: min(available, payloadLength))!
        if let intrinsic = selfDelimitedLength(of: command, payload: candidate), intrinsic < payloadLength {
            payloadLength = intrinsic
        } else if available < payloadLength {
            return nil
        }
        let payload = buffer.getSlice(at: headerEnd + 3, length: payloadLength)!
        buffer.moveReaderIndex(to: headerEnd + 3 + payloadLength)
        return GizwitsLANFrame(command: command, payload: payload, flag: flag)
    }

    /// Reads a UDP datagram, which must hold exactly one complete frame.
    public static func read(datagram: ByteBuffer, maximumLength: Int = defaultMaximumFrameLength) throws(TetherError) -> GizwitsLANFrame {
        var buffer = datagram
        guard let frame = try read(from: &buffer, maximumLength: maximumLength) else {
            throw TetherError(.malformedFrame, "datagram of \(datagram.readableBytes) bytes holds an incomplete frame")
        }
        guard buffer.readableBytes == 0 else {
            throw TetherError(.malformedFrame, "datagram has \(buffer.readableBytes) bytes after its frame")
        }
        return frame
    }

    /// The real payload length of commands whose payload says how long it is, once enough of it
    /// has arrived to tell; nil otherwise.
    private static func selfDelimitedLength(of command: GizwitsLANCommand, payload: ByteBuffer) -> Int? {
        var payload = payload
        switch command {
        case .passcodeResponse:
            guard let passcode = payload.gizwitsReadLengthPrefixedBytes() else { return nil }
            return 2 + passcode.count
        case .hardwareInfo:
            guard payload.readBytes(length: GizwitsHardwareInfo.fixedFieldsLength) != nil,
                let firmware = payload.gizwitsReadLengthPrefixedBytes(),
                let productKey = payload.gizwitsReadLengthPrefixedBytes()
            else { return nil }
            return GizwitsHardwareInfo.fixedFieldsLength + 4 + firmware.count + productKey.count
        default:
            return nil
        }
    }
}

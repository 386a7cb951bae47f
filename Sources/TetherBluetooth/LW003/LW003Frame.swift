public import TetherCore

/// An LW003-V3 single frame (`ED`, ble-profiles.md A4): every command written to `AA02` and every
/// reply the device notifies there, and the device-initiated `ED 02` frames of `AA01` and `AA04`.
///
/// ```
/// ED <flag> <command> <LEN> <LEN payload bytes, integers big-endian>
/// ```
///
/// Read request `ED 00 <cmd> 00`, read reply `ED 00 <cmd> LEN <value>`; write request
/// `ED 01 <cmd> LEN <value>`, write reply `ED 01 <cmd> 01 <result>` (`01` = ok). The typed
/// requests and reply values are in `LW003Frame+Commands.swift`.
public struct LW003Frame: Hashable, Sendable {
    /// The first byte of every single frame.
    public static let header: UInt8 = 0xED
    /// The largest payload a frame can describe with its one LEN byte.
    public static let maximumPayloadLength = 255

    /// What the frame does: a read, a write (or config), or a device-initiated notification.
    public enum Flag: UInt8, Hashable, Sendable, CaseIterable {
        /// `00`: a read request or its reply.
        case read = 0x00
        /// `01`: a write (config) request or its result.
        case write = 0x01
        /// `02`: sent by the device on its own (`AA01`, `AA04`).
        case notify = 0x02
    }

    /// Read, write or notify.
    public let flag: Flag
    /// The command it is about; reply and request carry the same.
    public let command: LW003CommandID
    /// The value read or written (at most 255 bytes).
    public let payload: [UInt8]

    /// A frame; throws `TetherError(.invalidArgument)` when the payload is longer than 255 bytes.
    public init(flag: Flag, command: LW003CommandID, payload: [UInt8] = []) throws(TetherError) {
        guard payload.count <= Self.maximumPayloadLength else {
            throw TetherError(.invalidArgument, "an LW003 \(command) payload of \(payload.count) bytes does not fit a frame (at most 255)")
        }
        self.init(unchecked: flag, command: command, payload: payload)
    }

    /// For payloads known to fit.
    init(unchecked flag: Flag, command: LW003CommandID, payload: [UInt8]) {
        self.flag = flag
        self.command = command
        self.payload = payload
    }

    /// Decodes one whole notification (or one written value).
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless the bytes are `ED`, a known flag, the
    ///   command, and a LEN equal to the number of bytes after it.
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.count >= 4 else {
            throw TetherError(.malformedFrame, "an LW003 frame of \(bytes.count) bytes is shorter than its 4-byte header")
        }
        guard bytes[0] == Self.header else {
            throw TetherError(.malformedFrame, "an LW003 frame starts with \(BluetoothProfileBytes.hexPrefix(bytes[..<1])), not ED")
        }
        guard let flag = Flag(rawValue: bytes[1]) else {
            throw TetherError(.malformedFrame, "an LW003 frame has flag \(BluetoothProfileBytes.hexPrefix(bytes[1..<2])), not 00, 01 or 02")
        }
        guard Int(bytes[3]) == bytes.count - 4 else {
            throw TetherError(.malformedFrame, "an LW003 frame's LEN says \(bytes[3]) bytes but \(bytes.count - 4) follow")
        }
        self.init(unchecked: flag, command: LW003CommandID(rawValue: bytes[2]), payload: Array(bytes[4...]))
    }

    /// The frame as it goes over the air.
    public var bytes: [UInt8] {
        [Self.header, flag.rawValue, command.rawValue, UInt8(payload.count)] + payload
    }
}

public import TetherCore

/// An LW003-V3 multi-packet frame (`EE`, ble-profiles.md A4) on `AA02`: how values too long for
/// one frame (the advertising-name filter list, command `0x99`) are read and written.
///
/// The three shapes differ by length, so one notification or write decodes unambiguously:
///
/// ```
/// EE 00 <cmd> 00                                   read request (4 bytes)
/// EE <flag> <cmd> <total> <index> <LEN> <data>     one packet of the value (6 + LEN bytes)
/// EE 01 <cmd> <index> <result>                     the device's ack of a written packet (5 bytes)
/// ```
///
/// The ack's layout is a Tether convention (the vendors' clients read only the result byte).
public enum LW003MultiPacketFrame: Hashable, Sendable {
    /// The first byte of every multi-packet frame.
    public static let header: UInt8 = 0xEE

    /// `EE 00 <cmd> 00`: asks the device for the whole value; it answers with packets.
    case readRequest(command: LW003CommandID)
    /// One piece of a value, read or written.
    case packet(LW003MultiPacket)
    /// `EE 01 <cmd> <index> <result>`: the device took (`01`) or refused the written packet
    /// `index`; the ack of the last index is the result of the write.
    case acknowledgement(command: LW003CommandID, index: UInt8, success: Bool)

    /// Decodes one whole notification or written value.
    ///
    /// - Throws: `TetherError(.malformedFrame)` for anything but the three shapes above: a wrong
    ///   header or flag, a LEN that does not match, an index not below the total.
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.first == Self.header else {
            throw TetherError(.malformedFrame, "an LW003 multi-packet frame starts with \(BluetoothProfileBytes.hexPrefix(bytes.prefix(1))), not EE")
        }
        switch bytes.count {
        case 4:
            guard bytes[1] == LW003Frame.Flag.read.rawValue, bytes[3] == 0 else {
                throw TetherError(.malformedFrame, "a 4-byte LW003 multi-packet frame is not a read request (EE 00 <cmd> 00)")
            }
            self = .readRequest(command: LW003CommandID(rawValue: bytes[2]))
        case 5:
            guard bytes[1] == LW003Frame.Flag.write.rawValue else {
                throw TetherError(.malformedFrame, "a 5-byte LW003 multi-packet frame is not an ack (EE 01 <cmd> <index> <result>)")
            }
            self = .acknowledgement(command: LW003CommandID(rawValue: bytes[2]), index: bytes[3], success: bytes[4] == 0x01)
        case 6...:
            self = .packet(try LW003MultiPacket(decoding: bytes))
        default:
            throw TetherError(.malformedFrame, "an LW003 multi-packet frame of \(bytes.count) bytes is too short")
        }
    }

    /// The frame as it goes over the air.
    public var bytes: [UInt8] {
        switch self {
        case .readRequest(let command): [Self.header, LW003Frame.Flag.read.rawValue, command.rawValue, 0x00]
        case .packet(let packet): packet.bytes
        case .acknowledgement(let command, let index, let success):
            [Self.header, LW003Frame.Flag.write.rawValue, command.rawValue, index, success ? 0x01 : 0x00]
        }
    }
}

/// One packet of a multi-packet value: `EE <flag> <cmd> <total> <index> <LEN> <data>`.
public struct LW003MultiPacket: Hashable, Sendable {
    /// Read (a device's reply) or write (a central's request).
    public let flag: LW003Frame.Flag
    /// The command the value belongs to.
    public let command: LW003CommandID
    /// How many packets make up the value (1 to 255).
    public let total: UInt8
    /// This packet's place, from 0.
    public let index: UInt8
    /// This packet's piece of the value (at most 255 bytes).
    public let data: [UInt8]

    /// A packet; throws `TetherError(.invalidArgument)` for the notify flag, a total of 0, an index
    /// not below the total, or more than 255 bytes of data.
    public init(flag: LW003Frame.Flag, command: LW003CommandID, total: UInt8, index: UInt8, data: [UInt8]) throws(TetherError) {
        guard flag != .notify, total >= 1, index < total, data.count <= 255 else {
            throw TetherError(
                .invalidArgument, "an LW003 multi-packet frame needs flag read or write, index < total, at most 255 bytes (index \(index) of \(total))")
        }
        self.init(unchecked: flag, command: command, total: total, index: index, data: data)
    }

    private init(unchecked flag: LW003Frame.Flag, command: LW003CommandID, total: UInt8, index: UInt8, data: [UInt8]) {
        self.flag = flag
        self.command = command
        self.total = total
        self.index = index
        self.data = data
    }

    /// Decodes one packet (at least 6 bytes).
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.count >= 6, bytes[0] == LW003MultiPacketFrame.header else {
            throw TetherError(.malformedFrame, "an LW003 multi-packet frame is EE and at least 5 header bytes, not \(BluetoothProfileBytes.hexPrefix(bytes))")
        }
        guard let flag = LW003Frame.Flag(rawValue: bytes[1]), flag != .notify else {
            throw TetherError(.malformedFrame, "an LW003 multi-packet frame has flag \(BluetoothProfileBytes.hexPrefix(bytes[1..<2])), not 00 or 01")
        }
        guard bytes[3] >= 1, bytes[4] < bytes[3] else {
            throw TetherError(.malformedFrame, "an LW003 multi-packet frame has index \(bytes[4]) of \(bytes[3]) packets")
        }
        guard Int(bytes[5]) == bytes.count - 6 else {
            throw TetherError(.malformedFrame, "an LW003 multi-packet frame's LEN says \(bytes[5]) bytes but \(bytes.count - 6) follow")
        }
        self.init(unchecked: flag, command: LW003CommandID(rawValue: bytes[2]), total: bytes[3], index: bytes[4], data: Array(bytes[6...]))
    }

    /// The packet as it goes over the air.
    public var bytes: [UInt8] {
        [LW003MultiPacketFrame.header, flag.rawValue, command.rawValue, total, index, UInt8(data.count)] + data
    }

    /// Cuts a value into packets of at most `maximumDataLength` bytes of data each (the iOS client
    /// cuts at 100, Android at 176). An empty value is one empty packet (`EE 01 <cmd> 01 00 00`).
    ///
    /// - Throws: `TetherError(.invalidArgument)` when `maximumDataLength` is not 1…255, the flag is
    ///   notify, or the value needs more than 255 packets.
    public static func packets(
        flag: LW003Frame.Flag, command: LW003CommandID, value: [UInt8], maximumDataLength: Int = 100
    ) throws(TetherError) -> [LW003MultiPacket] {
        guard (1...255).contains(maximumDataLength), flag != .notify else {
            throw TetherError(.invalidArgument, "LW003 multi-packet frames carry 1 to 255 bytes each and are read or write, not \(maximumDataLength)")
        }
        let count = max(1, (value.count + maximumDataLength - 1) / maximumDataLength)
        guard count <= 255 else {
            throw TetherError(.invalidArgument, "an LW003 value of \(value.count) bytes needs more than 255 packets")
        }
        return (0..<count).map { index in
            let start = index * maximumDataLength
            let piece = Array(value[start..<min(value.count, start + maximumDataLength)])
            return LW003MultiPacket(unchecked: flag, command: command, total: UInt8(count), index: UInt8(index), data: piece)
        }
    }
}

/// Puts the packets of one multi-packet value back together, in index order, whatever order they
/// came in: feed every packet to ``append(_:)`` until it returns the value.
public struct LW003MultiPacketAssembler: Hashable, Sendable {
    private var pieces: [UInt8: [UInt8]] = [:]
    private var first: LW003MultiPacket?

    /// An assembler waiting for the first packet.
    public init() {}

    /// Adds a packet; returns the whole value once all `total` packets are in, and starts afresh.
    ///
    /// - Throws: `TetherError(.malformedFrame)` when the packet belongs to another value (another
    ///   command, flag or total) or repeats an index; the assembler then starts afresh.
    public mutating func append(_ packet: LW003MultiPacket) throws(TetherError) -> [UInt8]? {
        if let first, first.command != packet.command || first.flag != packet.flag || first.total != packet.total {
            self = Self()
            throw TetherError(
                .malformedFrame, "an LW003 packet of \(packet.command) (\(packet.total) packets) in the middle of \(first.command) (\(first.total))")
        }
        guard pieces[packet.index] == nil else {
            self = Self()
            throw TetherError(.malformedFrame, "an LW003 multi-packet value repeats packet \(packet.index)")
        }
        first = first ?? packet
        pieces[packet.index] = packet.data
        guard pieces.count == Int(packet.total) else { return nil }
        let value = (0..<packet.total).flatMap { pieces[$0] ?? [] }
        self = Self()
        return value
    }
}

public import TetherCore

/// The advertising-name filter list of an LW003-V3 (command `0x99`, read and written with
/// ``LW003MultiPacketFrame``s): the device reports only beacons whose name matches one of these.
///
/// On the wire the value is a sequence of `<length u8><ASCII name>` entries.
public struct LW003NameFilterList: Hashable, Sendable {
    /// The most names a device keeps.
    public static let maximumCount = 10
    /// The longest name, in characters.
    public static let maximumNameLength = 20

    /// The names, in the device's order.
    public let names: [String]

    /// A list; throws `TetherError(.invalidArgument)` unless there are at most 10 names of 1 to
    /// 20 printable ASCII characters.
    public init(names: [String]) throws(TetherError) {
        guard names.count <= Self.maximumCount else {
            throw TetherError(.invalidArgument, "an LW003 name filter list holds at most 10 names, not \(names.count)")
        }
        for name in names where !Self.isValid(Array(name.utf8)) {
            throw TetherError(.invalidArgument, "an LW003 name filter \"\(name.prefix(24))\" is not 1 to 20 printable ASCII characters")
        }
        self.names = names
    }

    /// Decodes the value put together from the packets of a read reply.
    ///
    /// - Throws: `TetherError(.malformedFrame)` when an entry runs past the end, or a name is empty,
    ///   longer than 20 or not printable ASCII, or there are more than 10.
    public init(decoding value: [UInt8]) throws(TetherError) {
        var names: [String] = []
        var offset = 0
        while offset < value.count {
            let length = Int(value[offset])
            guard offset + 1 + length <= value.count else {
                throw TetherError(.malformedFrame, "an LW003 name filter entry of \(length) bytes runs past the end of the list")
            }
            let name = Array(value[(offset + 1)..<(offset + 1 + length)])
            guard Self.isValid(name) else {
                throw TetherError(.malformedFrame, "an LW003 name filter entry is not 1 to 20 printable ASCII characters")
            }
            guard names.count < Self.maximumCount else {
                throw TetherError(.malformedFrame, "an LW003 name filter list holds more than 10 names")
            }
            names.append(String(decoding: name, as: UTF8.self))
            offset += 1 + length
        }
        self.names = names
    }

    /// The value as it is written (before it is cut into packets).
    public var value: [UInt8] {
        names.flatMap { [UInt8(truncatingIfNeeded: $0.utf8.count)] + Array($0.utf8) }
    }

    /// The packets that write this list (`EE 01 99 …`), at most `maximumDataLength` data bytes each.
    public func writePackets(maximumDataLength: Int = 100) throws(TetherError) -> [LW003MultiPacket] {
        try LW003MultiPacket.packets(flag: .write, command: .nameFilterList, value: value, maximumDataLength: maximumDataLength)
    }

    /// The packets a device answers a read with (`EE 00 99 …`).
    public func readReplyPackets(maximumDataLength: Int = 176) throws(TetherError) -> [LW003MultiPacket] {
        try LW003MultiPacket.packets(flag: .read, command: .nameFilterList, value: value, maximumDataLength: maximumDataLength)
    }

    private static func isValid(_ name: [UInt8]) -> Bool {
        (1...maximumNameLength).contains(name.count) && name.allSatisfy { (0x20...0x7E).contains($0) }
    }
}

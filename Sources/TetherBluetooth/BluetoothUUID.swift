public import TetherCore

/// A GATT or advertisement UUID: 16-bit and 32-bit ones stand for their 128-bit form on the
/// Bluetooth base UUID (`0000XXXX-0000-1000-8000-00805F9B34FB`), so `AA02` and its long form are
/// equal.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes of the 128-bit form, in string order.
    public let bytes: [UInt8]

    static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// A 16-bit UUID on the Bluetooth base.
    public init(_ short: UInt16) {
        self.bytes = [0, 0, UInt8(short >> 8), UInt8(short & 0xFF)] + Self.baseTail
    }

    /// The 16 bytes of a 128-bit UUID in string order; nil unless there are exactly 16.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// `AA02`, `0000aa02`, or the canonical `0000AA02-0000-1000-8000-00805F9B34FB` (any case).
    public init(_ text: String) throws(TetherError) {
        let hex = text.filter { $0 != "-" }
        guard hex.utf8.count == 4 || hex.utf8.count == 8 || hex.utf8.count == 32, let digits = Self.hexBytes(hex) else {
            throw TetherError(.invalidArgument, "\"\(text.prefix(64))\" is not a Bluetooth UUID (4, 8 or 32 hex digits)")
        }
        if text.contains("-") {
            let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.utf8.count)
            guard groups == [8, 4, 4, 4, 12] else {
                throw TetherError(.invalidArgument, "\"\(text.prefix(64))\" is not a Bluetooth UUID (8-4-4-4-12 hex digits)")
            }
        }
        switch digits.count {
        case 2: self.bytes = [0, 0] + digits + Self.baseTail
        case 4: self.bytes = digits + Self.baseTail
        default: self.bytes = digits
        }
    }

    private static func hexBytes(_ hex: String) -> [UInt8]? {
        var result: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let value = high {
                result.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? result : nil
    }

    /// The 16-bit value when this UUID is on the Bluetooth base and fits 16 bits.
    public var short: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, Array(bytes[4...]) == Self.baseTail else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The canonical lower-case 128-bit form, as BlueZ writes it.
    public var uuidString: String {
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text += "-" }
            text += Self.hex(byte)
        }
        return text
    }

    /// `AA02` for a UUID on the base, the 128-bit form otherwise.
    public var description: String {
        if let short { return (Self.hex(UInt8(short >> 8)) + Self.hex(UInt8(short & 0xFF))).uppercased() }
        return uuidString.uppercased()
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}

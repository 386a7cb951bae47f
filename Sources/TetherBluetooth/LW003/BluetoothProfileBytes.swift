import TetherCore

/// Integer and address helpers shared by the profile codecs (LW003-V3, DIoT). Every read checks
/// its bounds first, so no input can make a decoder trap.
enum BluetoothProfileBytes {
    /// A big-endian unsigned integer of `count` bytes (at most 8) at `offset`; nil when out of bounds.
    static func bigEndian(_ bytes: ArraySlice<UInt8>, at offset: Int, count: Int) -> UInt64? {
        let start = bytes.startIndex + offset
        guard offset >= 0, count <= 8, start + count <= bytes.endIndex else { return nil }
        var value: UInt64 = 0
        for byte in bytes[start..<start + count] { value = value << 8 | UInt64(byte) }
        return value
    }

    /// A little-endian unsigned 32-bit integer at `offset`; nil when out of bounds.
    static func littleEndianUInt32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32? {
        let start = bytes.startIndex + offset
        guard offset >= 0, start + 4 <= bytes.endIndex else { return nil }
        var value: UInt32 = 0
        for byte in bytes[start..<start + 4].reversed() { value = value << 8 | UInt32(byte) }
        return value
    }

    static func bigEndianBytes(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    static func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
    }

    /// `C8:47:8C:12:34:56`: upper case, in the order the bytes came.
    static func macString(_ bytes: some Collection<UInt8>) -> String {
        // Written into one buffer: every record of a storage upload has a MAC to show.
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            if !text.isEmpty { text.append(UInt8(ascii: ":")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The six bytes of a MAC address written with colons, dashes or nothing between the bytes.
    static func macBytes(_ text: String, for what: String) throws(TetherError) -> [UInt8] {
        guard let bytes = MACAddress.bytes(text) else {
            throw TetherError(.invalidArgument, "\(what): \"\(text.prefix(32))\" is not a MAC address (12 hex digits)")
        }
        return bytes
    }

    /// `ED 02 01`: a few bytes as hex with spaces, for error messages (at most 8 bytes shown).
    static func hexPrefix(_ bytes: some Collection<UInt8>) -> String {
        let shown = bytes.prefix(8).map { [$0].tetherHex.uppercased() }.joined(separator: " ")
        return bytes.count > 8 ? shown + " …" : shown
    }
}

/// Base64 (RFC 4648 §4, with padding) for the few places the protocols carry bytes as text (the
/// RRPC payloads of the Open API), without Foundation in the libraries.
extension Array where Element == UInt8 {
    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The bytes as padded Base64.
    public var tetherBase64: String {
        var output: [UInt8] = []
        output.reserveCapacity((count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= count {
            let group = UInt32(self[index]) << 16 | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2])
            for shift in [18, 12, 6, 0] { output.append(Self.base64Alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
            index += 3
        }
        switch count - index {
        case 1:
            let group = UInt32(self[index]) << 16
            output += [Self.base64Alphabet[Int(group >> 18 & 0x3F)], Self.base64Alphabet[Int(group >> 12 & 0x3F)], UInt8(ascii: "="), UInt8(ascii: "=")]
        case 2:
            let group = UInt32(self[index]) << 16 | UInt32(self[index + 1]) << 8
            output += [
                Self.base64Alphabet[Int(group >> 18 & 0x3F)], Self.base64Alphabet[Int(group >> 12 & 0x3F)], Self.base64Alphabet[Int(group >> 6 & 0x3F)],
                UInt8(ascii: "="),
            ]
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Reads padded Base64; nil for anything else (a wrong length, a character outside the
    /// alphabet, padding in the middle, or bits set in the padding, so that each byte string
    /// has exactly one text).
    public init?(tetherBase64 text: String) {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            var group: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                let value: UInt32
                if character == UInt8(ascii: "=") {
                    // Only the last group's last one or two characters may be padding.
                    guard index + 4 == input.count, offset >= 2 else { return nil }
                    padding += 1
                    value = 0
                } else {
                    guard padding == 0, let decoded = Self.base64Value(character) else { return nil }
                    value = decoded
                }
                group = group << 6 | value
            }
            switch padding {
            case 0: output += [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
            case 1:
                guard group & 0xFF == 0 else { return nil }
                output += [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF)]
            default:
                guard group & 0xFFFF == 0 else { return nil }
                output.append(UInt8(group >> 16 & 0xFF))
            }
            index += 4
        }
        self = output
    }

    private static func base64Value(_ character: UInt8) -> UInt32? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(character - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(character - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(character - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}

/// MAC addresses as people, QR codes and services write them: `ac:cf:23:50:d4:46`,
/// `AC-CF-23-50-D4-46` or `accf2350d446`.
public enum MACAddress {
    /// The six bytes, or nil when `text` is not 12 ASCII hex digits once colons and dashes are
    /// removed.
    public static func bytes(_ text: String) -> [UInt8]? {
        // Read from the UTF-8 in one pass: simulators encode a MAC into every record they store.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(6)
        var high: UInt8?
        for unit in text.utf8 where unit != UInt8(ascii: ":") && unit != UInt8(ascii: "-") {
            guard let nibble = nibble(unit), bytes.count < 6 else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes.count == 6 && high == nil ? bytes : nil
    }

    private static func nibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// 12 lowercase hex digits (the cloud's form), or nil.
    public static func hexDigits(_ text: String) -> String? {
        let digits = text.lowercased().filter { $0 != ":" && $0 != "-" }
        guard digits.count == 12, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        return digits
    }

    /// `ac:cf:23:50:d4:46`.
    public static func display(_ bytes: [UInt8]) -> String {
        bytes.map { [$0].tetherHex }.joined(separator: ":")
    }
}

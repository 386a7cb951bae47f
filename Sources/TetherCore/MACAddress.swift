/// MAC addresses as people, QR codes and services write them: `ac:cf:23:50:d4:46`,
/// `AC-CF-23-50-D4-46` or `accf2350d446`.
public enum MACAddress {
    /// The six bytes, or nil when `text` is not 12 ASCII hex digits once colons and dashes are
    /// removed.
    public static func bytes(_ text: String) -> [UInt8]? {
        guard let digits = hexDigits(text) else { return nil }
        let characters = Array(digits)
        return stride(from: 0, to: 12, by: 2).map { UInt8(String(characters[$0..<$0 + 2]), radix: 16)! }
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

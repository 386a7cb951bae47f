/// MAC addresses as people, QR codes and services write them: `ac:cf:23:50:d4:46`,
/// `AC-CF-23-50-D4-46` or `accf2350d446`.
public enum MACAddress {
    /// The six bytes, or nil when `text` is not 12 ASCII hex digits once colons and dashes are
    /// removed.
    public static func bytes(_ text: String) -> [UInt8]? {
        let digits = text.utf8.filter { $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "-") }
        // Twelve characters that make six bytes leave no room for the separators or the `0x`
        // that the hex reader also accepts.
        guard digits.count == 12, let bytes = [UInt8](tetherHex: String(decoding: digits, as: UTF8.self)), bytes.count == 6 else { return nil }
        return bytes
    }

    /// 12 lowercase hex digits (the cloud's form), or nil.
    public static func hexDigits(_ text: String) -> String? {
        bytes(text)?.tetherHex
    }

    /// `ac:cf:23:50:d4:46`.
    public static func display(_ bytes: [UInt8]) -> String {
        bytes.map { [$0].tetherHex }.joined(separator: ":")
    }
}

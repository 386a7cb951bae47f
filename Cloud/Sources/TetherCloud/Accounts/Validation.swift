import Foundation

/// Checks of identifiers people type. Usernames can never be mistaken for an e-mail address or
/// a phone number, because `/app/login` accepts all three in one field.
///
/// Names are compared in Unicode Normalization Form KC: compatibility variants (full-width
/// letters, ligatures, superscripts) and composed or decomposed accents become one form, so two
/// accounts cannot carry names that render the same from those. Letters of different scripts
/// that look alike (Latin `a`, Cyrillic `а`) stay different, as in PRECIS (RFC 8265).
enum Validation {
    /// The form user names are stored and compared in.
    static func normalizedName(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping
    }

    /// Text people give things (remarks, aliases, profile fields): at most `maximum`
    /// characters, and no control characters (NUL, line breaks, escapes) or bidirectional
    /// overrides, which make one text display as another.
    static func displayText(_ text: String?, field: String, maximum: Int = 256) throws(CloudAPIError) {
        guard let text else { return }
        guard text.count <= maximum else { throw .formInvalid(detail: "\(field) must have at most \(maximum) characters") }
        guard !text.unicodeScalars.contains(where: isForbidden) else {
            throw .formInvalid(detail: "\(field) must not contain control characters")
        }
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.generalCategory == .control { return true }
        // Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
        return (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// Checks a user name already in ``normalizedName(_:)`` form.
    static func username(_ text: String) throws(CloudAPIError) {
        guard (2...64).contains(text.count) else { throw .formInvalid(detail: "username must have 2 to 64 characters") }
        guard !text.unicodeScalars.contains(where: isForbidden) else {
            throw .formInvalid(detail: "username must not contain control characters")
        }
        guard !text.contains("@"), !text.contains(where: \.isWhitespace) else {
            throw .formInvalid(detail: "username must not contain @ or spaces")
        }
        guard !text.allSatisfy({ $0.isNumber || $0 == "+" }) else {
            throw .formInvalid(detail: "username must not be a phone number")
        }
    }

    /// A phone number as the reference writes international ones: `+<country><number>`, or
    /// national digits.
    static func phone(_ text: String) throws(CloudAPIError) {
        let digits = text.hasPrefix("+") ? text.dropFirst() : Substring(text)
        guard (5...20).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .formInvalid(detail: "phone must be 5 to 20 digits, optionally after +")
        }
    }

    static func email(_ text: String) throws(CloudAPIError) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !text.contains(where: \.isWhitespace),
            !text.unicodeScalars.contains(where: isForbidden)
        else {
            throw .formInvalid(detail: "email is not an e-mail address")
        }
    }

    /// A device's LAN passcode: 8 to 32 ASCII letters or digits (GAgent's are 10 upper-case
    /// letters), long enough that the binding throttle makes guessing hopeless.
    static func passcode(_ text: String) throws(CloudAPIError) {
        guard (8...32).contains(text.count), text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw .formInvalid(detail: "passcode must be 8 to 32 letters or digits")
        }
    }

    static func mac(_ text: String) throws(CloudAPIError) -> String {
        let hex = text.lowercased().filter { $0 != ":" && $0 != "-" }
        guard hex.count == 12, hex.allSatisfy(\.isHexDigit) else {
            throw .formInvalid(detail: "mac must be 12 hexadecimal digits")
        }
        return hex
    }
}

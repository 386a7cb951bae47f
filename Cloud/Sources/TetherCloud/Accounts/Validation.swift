/// Checks of identifiers people type. Usernames can never be mistaken for an e-mail address or
/// a phone number, because `/app/login` accepts all three in one field.
enum Validation {
    static func username(_ text: String) throws(CloudAPIError) {
        guard (2...64).contains(text.count) else { throw .formInvalid(detail: "username must have 2 to 64 characters") }
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
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !text.contains(where: \.isWhitespace)
        else {
            throw .formInvalid(detail: "email is not an e-mail address")
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

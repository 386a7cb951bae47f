import Crypto
import Foundation

/// Random identifiers and secrets, and the one-way hashes under which tokens are stored.
enum Secrets {
    private static let base62 = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    private static let upper = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// `count` random bytes as lower-case hex: app ids, secrets, product keys, tokens.
    static func hex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return String(format: "%02x", byte)
        }.joined()
    }

    /// A device id in the Gizwits style: 22 base-62 characters.
    static func did() -> String { random(from: base62, count: 22) }

    /// A LAN passcode: 10 upper-case letters, as GAgent generates them.
    static func passcode() -> String { random(from: upper, count: 10) }

    static func digits(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
    }

    private static func random(from alphabet: [Character], count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// Tokens and codes are stored only as their SHA-256, so a copy of the database logs no one in.
    static func sha256(_ text: String) -> String { lowercaseHex(SHA256.hash(data: Data(text.utf8))) }

    static func md5(_ text: String) -> String { lowercaseHex(Insecure.MD5.hash(data: Data(text.utf8))) }

    /// A digest or a MAC as lowercase hex.
    static func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Compares secrets in time independent of where they differ.
    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8), right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

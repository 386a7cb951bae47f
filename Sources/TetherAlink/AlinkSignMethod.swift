import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The HMAC an Alink device signs its CONNECT with (`signmethod=` in the client id).
public enum AlinkSignMethod: String, Hashable, Sendable, CaseIterable {
    /// HMAC-SHA1, what the device SDKs use by default.
    case hmacsha1
    /// HMAC-MD5.
    case hmacmd5
    /// HMAC-SHA256, the one dynamic registration uses.
    case hmacsha256

    /// Lowercase hex of HMAC(key, content).
    public func sign(_ content: String, key: String) -> String {
        let key = SymmetricKey(data: Data(key.utf8))
        let content = Data(content.utf8)
        switch self {
        case .hmacsha1: return Self.hex(HMAC<Insecure.SHA1>.authenticationCode(for: content, using: key))
        case .hmacmd5: return Self.hex(HMAC<Insecure.MD5>.authenticationCode(for: content, using: key))
        case .hmacsha256: return Self.hex(HMAC<SHA256>.authenticationCode(for: content, using: key))
        }
    }

    /// Compares a presented signature with the expected one in time independent of where they
    /// differ, ignoring the case of the hex digits.
    public func verify(_ presented: some Collection<UInt8>, content: String, key: String) -> Bool {
        let expected = Array(sign(content, key: key).utf8)
        let given = presented.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") ? $0 + 32 : $0 }
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(expected, given) { difference |= a ^ b }
        return difference == 0
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}

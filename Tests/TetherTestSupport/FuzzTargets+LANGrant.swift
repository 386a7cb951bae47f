public import Crypto
import TetherGizwitsLAN

extension FuzzTargets {
    /// RFC 8032 §7.1 test 1's secret key: the grants below are signed with it.
    public static let grantSigningKey = try! Curve25519.Signing.PrivateKey(
        rawRepresentation: [
            0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
            0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60,
        ])

    /// A grant for device `gKufzxZwYeyd3Skbsb6mza`, valid from 1,700,000,000 to 1,700,003,600.
    public static let sampleGrant = try! LANGrant(
        keyID: LANGrantKey(grantSigningKey.publicKey).keyID, did: "gKufzxZwYeyd3Skbsb6mza", uid: "u0000000000000000001", rights: [.read, .control],
        issuedAt: 1_700_000_000, expiresAt: 1_700_003_600
    ).signed(with: grantSigningKey)

    public static let lanGrantSeeds: [[UInt8]] = [Array(sampleGrant.utf8)]

    /// The grant reader and verifier over one input (as the login's text): nothing crashes, and
    /// nothing but the sample grant itself verifies.
    public static func lanGrant(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let verifier = LANGrantVerifier(keys: [LANGrantKey(grantSigningKey.publicKey)])
        _ = LANGrant.parse(text)
        if case .success = verifier.verify(text, did: "gKufzxZwYeyd3Skbsb6mza", now: 1_700_000_100), text != sampleGrant {
            return "a changed grant verified"
        }
        return nil
    }
}

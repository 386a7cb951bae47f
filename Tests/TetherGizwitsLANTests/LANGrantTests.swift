import Crypto
import NIOCore
import Testing
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

/// The LAN grant (Tether's extension of the GAgent login): its text, its signature, and every
/// way a device refuses one.
@Suite("LAN grants")
struct LANGrantTests {
    static let key = FuzzTargets.grantSigningKey
    static let trusted = LANGrantKey(key.publicKey)
    static let verifier = LANGrantVerifier(keys: [trusted])
    static let did = "gKufzxZwYeyd3Skbsb6mza"

    @Test("the signing key is RFC 8032's test 1: its public key and signature of the empty message")
    func rfc8032() throws {
        #expect(Array(Self.key.publicKey.rawRepresentation).tetherHex == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = Array(try Self.key.signature(for: [UInt8]()))
        #expect(
            signature.tetherHex
                == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
    }

    @Test("the grant's text: prefix, the payload as the README documents it, a 64-byte signature; read back")
    func format() throws {
        let text = FuzzTargets.sampleGrant
        #expect(text.hasPrefix("tg1."))
        let (grant, payload, signature) = try #require(LANGrant.parse(text))
        #expect(signature.count == 64)
        #expect(
            String(decoding: payload, as: UTF8.self)
                == #"{"v":1,"kid":"\#(Self.trusted.keyID)","did":"gKufzxZwYeyd3Skbsb6mza","uid":"u0000000000000000001","rights":["read","control"],"iat":1700000000,"exp":1700003600}"#
        )
        #expect(grant.did == Self.did && grant.uid == "u0000000000000000001" && grant.rights == [.read, .control])
        #expect(grant.issuedAt == 1_700_000_000 && grant.expiresAt == 1_700_003_600)
        #expect(Self.trusted.keyID.count == 16)
        // Ed25519 is deterministic: the same grant and key give the same text.
        #expect(try grant.signed(with: Self.key) == text)
        #expect(LANGrantKey(base64: Self.trusted.base64) == Self.trusted)
    }

    @Test("valid within its time; expired from its expiry on; issued too far in the device's future")
    func times() throws {
        let text = FuzzTargets.sampleGrant
        #expect(try Self.verifier.verify(text, did: Self.did, now: 1_700_000_000).get().uid == "u0000000000000000001")
        #expect(try Self.verifier.verify(text, did: Self.did, now: 1_700_003_599).get().did == Self.did)
        #expect(Self.verifier.verify(text, did: Self.did, now: 1_700_003_600) == .failure(.expired))
        #expect(Self.verifier.verify(text, did: Self.did, now: 1_699_999_000) == .failure(.expired))
        #expect(try Self.verifier.verify(text, did: Self.did, now: 1_699_999_800).get().did == Self.did, "300 s of clock skew are allowed")
    }

    @Test("refused: another device's, signed by an untrusted key, payload changed, signature changed, not a grant at all")
    func refusals() throws {
        let text = FuzzTargets.sampleGrant
        #expect(Self.verifier.verify(text, did: "AAAAAAAAAAAAAAAAAAAAAA", now: 1_700_000_100) == .failure(.foreign))
        let stranger = Curve25519.Signing.PrivateKey()
        var forged = try #require(LANGrant.parse(text)).grant
        // The trusted key's id, someone else's signature.
        let forgedText = try forged.signed(with: stranger)
        #expect(Self.verifier.verify(forgedText, did: Self.did, now: 1_700_000_100) == .failure(.invalid))
        // A longer life, with the original signature.
        forged.expiresAt += 86_400
        let parts = text.split(separator: ".")
        let stretched = "tg1." + forged.payload.tetherBase64 + "." + parts[2]
        #expect(Self.verifier.verify(stretched, did: Self.did, now: 1_700_000_100) == .failure(.invalid))
        var signature = try #require([UInt8](tetherBase64: String(parts[2])))
        signature[10] ^= 1
        #expect(Self.verifier.verify("tg1." + parts[1] + "." + signature.tetherBase64, did: Self.did, now: 1_700_000_100) == .failure(.invalid))
        for junk in ["", "tg1.", "tg1..", "ABCDEFGHIJ", "tg1.e30=.AAAA", String(repeating: "A", count: 5000), "tg1." + parts[1] + "." + parts[2] + ".x"] {
            #expect(Self.verifier.verify(junk, did: Self.did, now: 1_700_000_100) == .failure(.invalid), "\(junk.prefix(20))")
        }
        #expect(LANGrantVerifier(keys: []).verify(text, did: Self.did, now: 1_700_000_100) == .failure(.invalid))
    }

    @Test("login results: GAgent's 00 and 01, Tether's 02–04, in frames both ways")
    func loginResults() throws {
        let expected: [(GizwitsLoginResult, String)] = [
            (.success, "00 00 00 03 04 00 00 09 00"), (.refused, "00 00 00 03 04 00 00 09 01"), (.grantExpired, "00 00 00 03 04 00 00 09 02"),
            (.grantInvalid, "00 00 00 03 04 00 00 09 03"), (.grantRequired, "00 00 00 03 04 00 00 09 04"),
        ]
        for (result, hex) in expected {
            let bytes = Array(GizwitsLANMessage.loginResult(result).frame.bytes.readableBytesView)
            #expect(bytes.tetherHex == hex.split(separator: " ").joined())
            var buffer = ByteBuffer(bytes: bytes)
            let frame = try #require(try GizwitsLANFrame.read(from: &buffer, maximumLength: 4096))
            #expect(try GizwitsLANMessage(frame: frame) == .loginResult(result))
        }
        // A grant fits the login's length-prefixed field.
        let login = GizwitsLANMessage.login(passcode: FuzzTargets.sampleGrant)
        var buffer = login.frame.bytes
        let frame = try #require(try GizwitsLANFrame.read(from: &buffer, maximumLength: 4096))
        #expect(try GizwitsLANMessage(frame: frame) == login)
    }

    @Test("fuzzed grant texts never crash and never verify", arguments: [UInt64(1), 2])
    func fuzz(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 5_000, seed: seed, seeds: FuzzTargets.lanGrantSeeds, target: FuzzTargets.lanGrant) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }
}

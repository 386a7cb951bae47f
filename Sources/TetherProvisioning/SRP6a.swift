import Crypto
public import TetherCore

/// SRP-6a as ESP-IDF's security 2 and esp_prov compute it (`shared/reference/provisioning.md`
/// §3.3): the RFC 5054 3072-bit group (g = 5), SHA-512, `PAD` to the group's 384 bytes where the
/// reference says, and minimal big-endian bytes everywhere else (as Python's `long_to_bytes`).
enum SRP6a {
    static let modulus = BigUInt(
        bytes: [UInt8](
            tetherHex:
                "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200CBBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
        )!)
    static let generator = BigUInt(5)
    static let length = 384
    static let field = MontgomeryField(modulus: modulus)

    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var hasher = SHA512()
        for part in parts { hasher.update(data: part) }
        return Array(hasher.finalize())
    }

    /// A hash read as an integer, and back as minimal bytes (how esp_prov feeds one hash to another).
    static func minimal(_ digest: [UInt8]) -> [UInt8] { BigUInt(bytes: digest).bytes }

    /// k = H(N ‖ PAD(g)).
    static let k = BigUInt(bytes: hash(modulus.padded(to: length), generator.padded(to: length)))

    /// x = H(s ‖ H(I ‖ ":" ‖ P)), both as minimal integers.
    static func x(salt: [UInt8], username: [UInt8], password: [UInt8]) -> BigUInt {
        BigUInt(bytes: hash(BigUInt(bytes: salt).bytes, minimal(hash(username + Array(":".utf8) + password))))
    }

    /// u = H(PAD(A) ‖ PAD(B)).
    static func u(_ a: BigUInt, _ b: BigUInt) -> BigUInt { BigUInt(bytes: hash(a.padded(to: length), b.padded(to: length))) }

    /// M = H((H(N) XOR H(PAD(g))) ‖ H(I) ‖ s ‖ A ‖ B ‖ K).
    static func proof(username: [UInt8], salt: [UInt8], a: BigUInt, b: BigUInt, key: [UInt8]) -> [UInt8] {
        let xored = zip(hash(modulus.bytes), hash(generator.padded(to: length))).map { $0 ^ $1 }
        return hash(xored, hash(username), BigUInt(bytes: salt).bytes, a.bytes, b.bytes, key)
    }

    /// H_AMK = H(A ‖ M ‖ K).
    static func deviceProof(a: BigUInt, proof: [UInt8], key: [UInt8]) -> [UInt8] { hash(a.bytes, proof, key) }

    /// The verifier a device stores: v = g^x.
    static func verifier(salt: [UInt8], username: [UInt8], password: [UInt8]) -> BigUInt {
        field.power(generator, x(salt: salt, username: username, password: password))
    }
}

/// protocomm security 2 (`shared/reference/provisioning.md` §3.3): SRP-6a proves the username and
/// password without sending them; the data then travels AES-256-GCM sealed, with a nonce whose
/// last four bytes count every message of either direction (`sec_patch_ver` 1) or stay fixed (0,
/// old firmware).
public enum ESPSecurity2 {
    /// The data phase: one key, one nonce sequence shared by both directions.
    struct Cipher: Sendable {
        let key: SymmetricKey
        var nonce: [UInt8]
        let patchVersion: Int

        mutating func seal(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            do {
                let box = try AES.GCM.seal(bytes, using: key, nonce: try AES.GCM.Nonce(data: nonce))
                try advance()
                return Array(box.ciphertext) + Array(box.tag)
            } catch let error as TetherError {
                throw error
            } catch {
                throw TetherError(.invalidArgument, "AES-GCM failed: \(error)")
            }
        }

        mutating func open(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            guard bytes.count >= 16 else { throw TetherError(.decryptionFailed, "a sealed message shorter than its tag") }
            do {
                let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: bytes.dropLast(16), tag: bytes.suffix(16))
                let clear = try AES.GCM.open(box, using: key)
                try advance()
                return Array(clear)
            } catch let error as TetherError {
                throw error
            } catch {
                throw TetherError(.integrityCheckFailed, "a message that does not open with the session key (out of step, or forged)")
            }
        }

        private mutating func advance() throws(TetherError) {
            guard patchVersion == 1 else { return }
            var counter = UInt32(nonce[8]) << 24 | UInt32(nonce[9]) << 16 | UInt32(nonce[10]) << 8 | UInt32(nonce[11])
            guard counter < UInt32.max else { throw TetherError(.invalidArgument, "the nonce counter is exhausted") }
            counter += 1
            nonce.replaceSubrange(8..<12, with: [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)])
        }
    }

    /// The app's side.
    public struct Client: ESPClientSecurity {
        let username: [UInt8]
        let password: [UInt8]
        let patchVersion: Int
        private let a: BigUInt
        let publicKey: BigUInt
        private var expectedDeviceProof: [UInt8]?
        private var key: [UInt8]?
        private var cipher: Cipher?

        /// - Parameter ephemeral: 32 bytes, for known-answer tests; random (top bit set) by default.
        public init(username: String, password: String, patchVersion: Int = 1, ephemeral: [UInt8]? = nil) {
            self.username = Array(username.utf8)
            self.password = Array(password.utf8)
            self.patchVersion = patchVersion
            var secret = ephemeral ?? SystemRandomBytes.bytes(32)
            if ephemeral == nil { secret[0] |= 0x80 }
            a = BigUInt(bytes: secret)
            publicKey = SRP6a.field.power(SRP6a.generator, a)
        }

        public var isEstablished: Bool { cipher != nil }

        public func command0() -> ESPSessionMessage { .sec2Command0(username: username, clientPublicKey: publicKey.bytes) }

        /// Response0 (B, salt) → Command1 (the proof M).
        public mutating func command1(after response: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage? {
            guard case .sec2Response0(let status, let deviceKey, let salt) = response, status == .success else {
                throw TetherError(.sessionNegotiationFailed, "step 1: the device refused the session or answered \(response)")
            }
            let b = BigUInt(bytes: deviceKey)
            guard b < SRP6a.modulus, !b.isZero else { throw TetherError(.sessionNegotiationFailed, "step 1: the device's public value is not in the group") }
            let u = SRP6a.u(publicKey, b)
            guard !u.isZero else { throw TetherError(.sessionNegotiationFailed, "step 1: u is zero") }
            let x = SRP6a.x(salt: salt, username: username, password: password)
            let field = SRP6a.field
            let kv = field.multiply(SRP6a.k, field.power(SRP6a.generator, x))
            let shared = field.power(field.subtract(b, kv), a + u * x)
            let key = SRP6a.hash(shared.bytes)
            let proof = SRP6a.proof(username: username, salt: salt, a: publicKey, b: b, key: key)
            expectedDeviceProof = SRP6a.deviceProof(a: publicKey, proof: proof, key: key)
            self.key = key
            return .sec2Command1(clientProof: proof)
        }

        /// Response1: the device's proof, and the nonce of the data phase.
        public mutating func finish(after response: ESPSessionMessage) throws(TetherError) {
            guard case .sec2Response1(let status, let proof, let nonce) = response, status == .success, let key, let expectedDeviceProof else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device refused the proof: a wrong username or password?")
            }
            guard proof == expectedDeviceProof else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device's proof does not match: it does not know the password")
            }
            guard nonce.count == 12 else { throw TetherError(.sessionNegotiationFailed, "step 2: a nonce of \(nonce.count) bytes") }
            cipher = Cipher(key: SymmetricKey(data: key.prefix(32)), nonce: nonce, patchVersion: patchVersion)
        }

        public mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            try withEstablished(&cipher) { (cipher: inout Cipher) throws(TetherError) in try cipher.seal(bytes) }
        }

        public mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            try withEstablished(&cipher) { (cipher: inout Cipher) throws(TetherError) in try cipher.open(bytes) }
        }
    }

    /// What a device stores for one username: the salt and the verifier (as `esp_prov`'s
    /// `sec2_gen_salt_verifier` makes them for firmware), made once; not the password.
    public struct Credential: Sendable {
        let username: [UInt8]
        let salt: [UInt8]
        let verifier: BigUInt

        public init(username: String, password: String, salt: [UInt8]? = nil) {
            self.username = Array(username.utf8)
            self.salt = salt ?? SystemRandomBytes.bytes(16)
            self.verifier = SRP6a.verifier(salt: self.salt, username: self.username, password: Array(password.utf8))
        }
    }

    /// The device's side: it holds the salt and verifier for one username.
    public struct Device: ESPDeviceSecurity {
        let username: [UInt8]
        let salt: [UInt8]
        let verifier: BigUInt
        let patchVersion: Int
        private let b: BigUInt
        private let nonce: [UInt8]
        private var pending: (a: BigUInt, publicKey: BigUInt, key: [UInt8])?
        private var cipher: Cipher?

        public init(credential: Credential, patchVersion: Int = 1, ephemeral: [UInt8]? = nil, nonce: [UInt8]? = nil) {
            self.username = credential.username
            self.salt = credential.salt
            self.verifier = credential.verifier
            self.patchVersion = patchVersion
            self.b = BigUInt(bytes: ephemeral ?? SystemRandomBytes.bytes(32))
            self.nonce = nonce ?? SystemRandomBytes.bytes(12)
        }

        public init(username: String, password: String, patchVersion: Int = 1, salt: [UInt8]? = nil, ephemeral: [UInt8]? = nil, nonce: [UInt8]? = nil) {
            self.init(
                credential: Credential(username: username, password: password, salt: salt), patchVersion: patchVersion, ephemeral: ephemeral, nonce: nonce)
        }

        public var isEstablished: Bool { cipher != nil }

        public mutating func respond(to command: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage {
            let field = SRP6a.field
            switch command {
            case .sec2Command0(let name, let clientKey):
                guard name == username else { throw TetherError(.sessionNegotiationFailed, "step 1: an unknown username") }
                let a = BigUInt(bytes: clientKey)
                guard a < SRP6a.modulus, !a.isZero else {
                    throw TetherError(.sessionNegotiationFailed, "step 1: the client's public value is not in the group")
                }
                let publicKey = field.add(field.multiply(SRP6a.k, verifier), field.power(SRP6a.generator, b))
                let u = SRP6a.u(a, publicKey)
                let shared = field.power(field.multiply(a, field.power(verifier, u)), b)
                pending = (a, publicKey, SRP6a.hash(shared.bytes))
                cipher = nil
                return .sec2Response0(status: .success, devicePublicKey: publicKey.bytes, salt: salt)
            case .sec2Command1(let proof):
                guard let pending else { throw TetherError(.sessionNegotiationFailed, "step 2: Command1 before Command0") }
                self.pending = nil
                guard proof == SRP6a.proof(username: username, salt: salt, a: pending.a, b: pending.publicKey, key: pending.key) else {
                    throw TetherError(.sessionNegotiationFailed, "step 2: the client's proof does not match: a wrong username or password")
                }
                cipher = Cipher(key: SymmetricKey(data: pending.key.prefix(32)), nonce: nonce, patchVersion: patchVersion)
                return .sec2Response1(status: .success, deviceProof: SRP6a.deviceProof(a: pending.a, proof: proof, key: pending.key), deviceNonce: nonce)
            default:
                throw TetherError(.sessionNegotiationFailed, "\(command) in a security 2 session")
            }
        }

        public mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            try withEstablished(&cipher) { (cipher: inout Cipher) throws(TetherError) in try cipher.seal(bytes) }
        }

        public mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            try withEstablished(&cipher) { (cipher: inout Cipher) throws(TetherError) in try cipher.open(bytes) }
        }
    }
}

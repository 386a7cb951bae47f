import Crypto
import _CryptoExtras
public import TetherCore

/// One AES-256-CTR keystream, consumed in order by both directions (protocomm security 1): the
/// counter block starts at the device's random bytes and counts up as a 128-bit big-endian integer.
struct AESCTRKeystream: Sendable {
    private let key: SymmetricKey
    private var counter: [UInt8]
    private var block: [UInt8] = []
    private var used = 16

    init(key: [UInt8], initialCounter: [UInt8]) {
        self.key = SymmetricKey(data: key)
        self.counter = initialCounter
    }

    /// The data phase of a session: refused until the handshake has ended.
    static func apply(_ bytes: [UInt8], to stream: inout AESCTRKeystream?, established: Bool) throws(TetherError) -> [UInt8] {
        guard established else { throw TetherError(.sessionNegotiationFailed, "no security 1 session yet") }
        return try withEstablished(&stream) { (stream: inout AESCTRKeystream) throws(TetherError) in try stream.apply(bytes) }
    }

    mutating func apply(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
        var output = bytes
        for index in output.indices {
            if used == 16 {
                block = counter
                do { try AES.permute(&block, key: key) } catch { throw TetherError(.invalidArgument, "AES failed: \(error)") }
                used = 0
                for position in (0..<16).reversed() {
                    counter[position] &+= 1
                    if counter[position] != 0 { break }
                }
            }
            output[index] ^= block[used]
            used += 1
        }
        return output
    }
}

/// protocomm security 1 (`shared/reference/provisioning.md` §3.2): X25519, the proof of
/// possession folded into the key, one AES-256-CTR keystream for both directions. The app's and
/// the device's sides as values; after the handshake, ``encrypt(_:)``/``decrypt(_:)`` in message
/// order (request, response, request, …).
public enum ESPSecurity1 {
    static func sessionKey(shared: [UInt8], pop: [UInt8]) -> [UInt8] {
        guard !pop.isEmpty else { return shared }
        return zip(shared, Array(SHA256.hash(data: pop))).map { $0 ^ $1 }
    }

    static func agree(_ privateKey: Curve25519.KeyAgreement.PrivateKey, with peer: [UInt8]) throws(TetherError) -> [UInt8] {
        do {
            let secret = try privateKey.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer))
            return secret.withUnsafeBytes { Array($0) }
        } catch {
            throw TetherError(.sessionNegotiationFailed, "the peer's X25519 public key is not one")
        }
    }

    /// The app's side.
    public struct Client: ESPClientSecurity {
        private let privateKey: Curve25519.KeyAgreement.PrivateKey
        private let pop: [UInt8]
        private var devicePublicKey: [UInt8] = []
        private var keystream: AESCTRKeystream?
        public private(set) var isEstablished = false

        /// - Parameters:
        ///   - pop: the proof of possession (empty: none).
        ///   - privateKey: 32 bytes, for known-answer tests; random by default.
        public init(pop: [UInt8], privateKey: [UInt8]? = nil) throws(TetherError) {
            do {
                self.privateKey = try privateKey.map { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) } ?? .init()
            } catch {
                throw TetherError(.invalidArgument, "an X25519 private key is 32 bytes")
            }
            self.pop = pop
        }

        public var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

        public func command0() -> ESPSessionMessage { .sec1Command0(clientPublicKey: publicKey) }

        /// Reads Response0 and answers Command1 (the device's key, encrypted: the proof).
        public mutating func command1(after response: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage? {
            guard case .sec1Response0(let status, let deviceKey, let random) = response else {
                throw TetherError(.sessionNegotiationFailed, "step 1: the device answered \(response) instead of Response0")
            }
            guard status == .success, deviceKey.count == 32, random.count == 16 else {
                throw TetherError(.sessionNegotiationFailed, "step 1: the device refused the session (status \(status)) or sent a malformed key")
            }
            let key = ESPSecurity1.sessionKey(shared: try ESPSecurity1.agree(privateKey, with: deviceKey), pop: pop)
            var stream = AESCTRKeystream(key: key, initialCounter: random)
            let verify = try stream.apply(deviceKey)
            keystream = stream
            devicePublicKey = deviceKey
            return .sec1Command1(clientVerifyData: verify)
        }

        /// Reads Response1: the device proves it derived the same key (so, with a PoP, that it
        /// knows it too).
        public mutating func finish(after response: ESPSessionMessage) throws(TetherError) {
            guard case .sec1Response1(let status, let verify) = response, var stream = keystream else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device answered \(response) instead of Response1")
            }
            guard status == .success else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device refused the proof (status \(status)): a wrong proof of possession?")
            }
            guard try stream.apply(verify) == publicKey else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device's proof does not match: it does not share the proof of possession")
            }
            keystream = stream
            isEstablished = true
        }

        public mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { try apply(bytes) }
        public mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { try apply(bytes) }

        private mutating func apply(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            try AESCTRKeystream.apply(bytes, to: &keystream, established: isEstablished)
        }
    }

    /// The device's side.
    public struct Device: ESPDeviceSecurity {
        private let privateKey: Curve25519.KeyAgreement.PrivateKey
        private let pop: [UInt8]
        private let random: [UInt8]
        private var clientPublicKey: [UInt8] = []
        private var keystream: AESCTRKeystream?
        public private(set) var isEstablished = false

        public init(pop: [UInt8], privateKey: [UInt8]? = nil, random: [UInt8]? = nil) throws(TetherError) {
            do {
                self.privateKey = try privateKey.map { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) } ?? .init()
            } catch {
                throw TetherError(.invalidArgument, "an X25519 private key is 32 bytes")
            }
            self.pop = pop
            self.random = random ?? SystemRandomBytes.bytes(16)
        }

        public var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

        /// Command0 → Response0 (its key and random), the keystream set up.
        public mutating func respond(to command: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage {
            switch command {
            case .sec1Command0(let clientKey):
                guard clientKey.count == 32 else { throw TetherError(.sessionNegotiationFailed, "step 1: a client key of \(clientKey.count) bytes") }
                let key = ESPSecurity1.sessionKey(shared: try ESPSecurity1.agree(privateKey, with: clientKey), pop: pop)
                keystream = AESCTRKeystream(key: key, initialCounter: random)
                clientPublicKey = clientKey
                isEstablished = false
                return .sec1Response0(status: .success, devicePublicKey: publicKey, deviceRandom: random)
            case .sec1Command1(let verify):
                guard var stream = keystream else { throw TetherError(.sessionNegotiationFailed, "step 2: Command1 before Command0") }
                guard try stream.apply(verify) == publicKey else {
                    keystream = nil
                    throw TetherError(.sessionNegotiationFailed, "step 2: the client's proof does not match: a wrong proof of possession")
                }
                let answer = try stream.apply(clientPublicKey)
                keystream = stream
                isEstablished = true
                return .sec1Response1(status: .success, deviceVerifyData: answer)
            default:
                throw TetherError(.sessionNegotiationFailed, "\(command) in a security 1 session")
            }
        }

        public mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { try apply(bytes) }
        public mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { try apply(bytes) }

        private mutating func apply(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] {
            try AESCTRKeystream.apply(bytes, to: &keystream, established: isEstablished)
        }
    }
}

/// Random bytes from the system generator, eight at a time.
enum SystemRandomBytes {
    static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        while bytes.count < count { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return Array(bytes.prefix(count))
    }
}

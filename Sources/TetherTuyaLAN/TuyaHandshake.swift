import Crypto
public import TetherCore

/// The 3.4/3.5 session-key negotiation (§4), one value per side and connection: messages in,
/// messages and the session key out. Each failure names its step
/// (`TetherError.Code.sessionNegotiationFailed`). Both sides switch to the session key only
/// after `SESS_KEY_NEG_FINISH`.
public enum TuyaHandshake {
    /// The session key from both nonces: 3.4 encrypts `Nc ⊕ Nd` with AES-ECB under the local key;
    /// 3.5 seals it with AES-GCM under the local key and the first 12 bytes of `Nc` as the nonce,
    /// and keeps the 16 bytes of ciphertext.
    public static func sessionKey(version: TuyaVersion, localKey: [UInt8], clientNonce: [UInt8], deviceNonce: [UInt8]) throws(TetherError) -> [UInt8] {
        guard clientNonce.count == 16, deviceNonce.count == 16 else {
            throw TetherError(.sessionNegotiationFailed, "nonces are 16 bytes each")
        }
        let mixed = zip(clientNonce, deviceNonce).map { $0 ^ $1 }
        switch version {
        case .v34:
            return try TuyaCrypto.ecbEncrypt(mixed, key: localKey, padding: false)
        case .v35:
            return Array(try TuyaCrypto.gcmSeal(mixed, key: localKey, iv: Array(clientNonce.prefix(12)), aad: []).dropFirst(12).prefix(16))
        default:
            throw TetherError(.unsupportedVersion, "version \(version) negotiates no session key")
        }
    }

    /// The app's side: it sends `START` with its nonce, checks the device's proof of the local key
    /// in `RESP`, answers `FINISH` with its own proof and derives the key.
    public struct App: Sendable {
        public let version: TuyaVersion
        let localKey: [UInt8]
        public let clientNonce: [UInt8]

        public init(version: TuyaVersion, localKey: [UInt8], clientNonce: [UInt8]? = nil) throws(TetherError) {
            guard version.negotiatesSessionKey else { throw TetherError(.unsupportedVersion, "version \(version) negotiates no session key") }
            try TuyaCrypto.checkKey(localKey)
            self.version = version
            self.localKey = localKey
            self.clientNonce = clientNonce ?? TuyaCrypto.randomBytes(16)
        }

        public func start(sequence: UInt32) -> TuyaMessage {
            TuyaMessage(sequence: sequence, command: .sessionKeyStart, payload: clientNonce)
        }

        /// `RESP` read (with the local-key codec) → `FINISH` to send and the session key.
        public func finish(after response: TuyaMessage, sequence: UInt32) throws(TetherError) -> (finish: TuyaMessage, sessionKey: [UInt8]) {
            guard response.command == .sessionKeyResponse else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device answered \(response.command) instead of SESS_KEY_NEG_RESP")
            }
            if let code = response.returnCode, code != 0 {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device refused the negotiation (return code \(code))")
            }
            guard response.payload.count >= 48 else {
                throw TetherError(.sessionNegotiationFailed, "step 2: SESS_KEY_NEG_RESP carries \(response.payload.count) bytes, not a nonce and an HMAC")
            }
            let deviceNonce = Array(response.payload.prefix(16))
            guard TuyaCrypto.constantTimeEquals(response.payload.dropFirst(16).prefix(32), TuyaCrypto.hmac(clientNonce, key: localKey)) else {
                throw TetherError(.sessionNegotiationFailed, "step 2: the device's HMAC of our nonce does not verify: the local key is wrong")
            }
            let finish = TuyaMessage(sequence: sequence, command: .sessionKeyFinish, payload: TuyaCrypto.hmac(deviceNonce, key: localKey))
            return (finish, try TuyaHandshake.sessionKey(version: version, localKey: localKey, clientNonce: clientNonce, deviceNonce: deviceNonce))
        }
    }

    /// The device's side: it answers `START` with its nonce and proof, then checks the app's
    /// proof in `FINISH` and derives the key.
    public struct Device: Sendable {
        public let version: TuyaVersion
        let localKey: [UInt8]
        public let deviceNonce: [UInt8]
        private var clientNonce: [UInt8]?

        public init(version: TuyaVersion, localKey: [UInt8], deviceNonce: [UInt8]? = nil) throws(TetherError) {
            guard version.negotiatesSessionKey else { throw TetherError(.unsupportedVersion, "version \(version) negotiates no session key") }
            try TuyaCrypto.checkKey(localKey)
            self.version = version
            self.localKey = localKey
            self.deviceNonce = deviceNonce ?? TuyaCrypto.randomBytes(16)
        }

        public mutating func respond(to start: TuyaMessage, sequence: UInt32) throws(TetherError) -> TuyaMessage {
            guard start.command == .sessionKeyStart, start.payload.count == 16 else {
                throw TetherError(.sessionNegotiationFailed, "step 1: SESS_KEY_NEG_START carries a 16-byte nonce")
            }
            clientNonce = start.payload
            return TuyaMessage(
                sequence: sequence, command: .sessionKeyResponse, returnCode: 0, payload: deviceNonce + TuyaCrypto.hmac(start.payload, key: localKey))
        }

        public func complete(with finish: TuyaMessage) throws(TetherError) -> [UInt8] {
            guard let clientNonce else { throw TetherError(.sessionNegotiationFailed, "step 3: SESS_KEY_NEG_FINISH before START") }
            guard finish.command == .sessionKeyFinish, finish.payload.count >= 32,
                TuyaCrypto.constantTimeEquals(finish.payload.prefix(32), TuyaCrypto.hmac(deviceNonce, key: localKey))
            else { throw TetherError(.sessionNegotiationFailed, "step 3: the app's HMAC of our nonce does not verify: the local key is wrong") }
            return try TuyaHandshake.sessionKey(version: version, localKey: localKey, clientNonce: clientNonce, deviceNonce: deviceNonce)
        }
    }
}

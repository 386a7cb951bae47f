public import TetherCore

/// A device's side of a protocomm security scheme: the handshake, then the data phase.
public protocol ESPDeviceSecurity: Sendable {
    var isEstablished: Bool { get }
    /// The answer to a client's handshake message; a failure ends the session.
    mutating func respond(to command: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage
    mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8]
    mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8]
}

/// An app's side of a protocomm security scheme: Command0, Command1 from Response0, the check of
/// Response1, then the data phase (security 0 has one round and no cipher).
public protocol ESPClientSecurity: Sendable {
    var isEstablished: Bool { get }
    func command0() -> ESPSessionMessage
    /// Command1, or nil when the scheme's handshake ended with Response0.
    mutating func command1(after response: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage?
    mutating func finish(after response: ESPSessionMessage) throws(TetherError)
    mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8]
    mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8]
}

/// protocomm security 0: a handshake that establishes nothing; data in clear.
public enum ESPSecurity0 {
    public struct Client: ESPClientSecurity {
        public private(set) var isEstablished = false
        public init() {}
        public func command0() -> ESPSessionMessage { .sec0Command }
        public mutating func command1(after response: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage? {
            guard case .sec0Response(.success) = response else { throw TetherError(.sessionNegotiationFailed, "the device refused security 0") }
            isEstablished = true
            return nil
        }
        public mutating func finish(after response: ESPSessionMessage) throws(TetherError) {}
        public mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { bytes }
        public mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { bytes }
    }

    public struct Device: ESPDeviceSecurity {
        public private(set) var isEstablished = false
        public init() {}
        public mutating func respond(to command: ESPSessionMessage) throws(TetherError) -> ESPSessionMessage {
            guard case .sec0Command = command else { throw TetherError(.sessionNegotiationFailed, "\(command) in a security 0 session") }
            isEstablished = true
            return .sec0Response(status: .success)
        }
        public mutating func encrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { bytes }
        public mutating func decrypt(_ bytes: [UInt8]) throws(TetherError) -> [UInt8] { bytes }
    }
}

/// The data phase of a session that may not be established yet: one place for the refusal.
func withEstablished<Cipher>(_ cipher: inout Cipher?, _ body: (inout Cipher) throws(TetherError) -> [UInt8]) throws(TetherError) -> [UInt8] {
    guard var established = cipher else { throw TetherError(.sessionNegotiationFailed, "no provisioning session yet") }
    defer { cipher = established }
    return try body(&established)
}

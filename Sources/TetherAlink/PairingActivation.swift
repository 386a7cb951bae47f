public import TetherCore

extension AlinkTopic {
    /// `thing/pairing/activate` (up) and its `_reply` (Tether extension): a new device presents
    /// the pairing token its user's app gave it with the Wi-Fi credentials, and is bound to that
    /// user.
    public static let pairingActivate = AlinkTopic.system("thing/pairing/activate")
}

/// The request of ``AlinkTopic/pairingActivate``: `{"token": "…"}`. The token is a secret: the
/// description leaves it out.
public struct PairingActivation: Sendable, Hashable, CustomStringConvertible {
    public static let method = "thing.pairing.activate"
    /// Tokens are 32 hex digits; anything much longer is not one.
    public static let maximumTokenLength = 128

    public var token: String

    public init(token: String) { self.token = token }

    /// Reads a request's params.
    public init(params: JSONObject) throws(TetherError) {
        guard case .string(let token)? = params["token"], !token.isEmpty, token.utf8.count <= Self.maximumTokenLength else {
            throw TetherError(.malformedPayload, "params.token is a string of 1 to \(Self.maximumTokenLength) bytes")
        }
        self.token = token
    }

    public var params: JSONObject { ["token": .string(token)] }

    public var description: String { "PairingActivation(token: <redacted>)" }
}

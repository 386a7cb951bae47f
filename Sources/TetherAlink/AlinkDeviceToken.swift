/// What a whitelist-free device connects with after its registration (`securemode=-2`): the
/// `clientId` and `deviceToken` the cloud answered on `/ext/regnwl`. The token is a secret:
/// keep it as a device secret is kept; it is never logged.
public struct AlinkDeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The answer's `clientId`, the client id's part before `|`.
    public var clientIDPrefix: String
    public var token: String

    public init(clientIDPrefix: String, token: String) {
        self.clientIDPrefix = clientIDPrefix
        self.token = token
    }

    public var description: String { "AlinkDeviceToken(\(clientIDPrefix), token redacted)" }
}

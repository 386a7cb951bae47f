import TetherCloudProtocol

/// A pairing token for a new device (``TetherCloudAPI/pairingToken(_:productKey:homeID:)``): the
/// app gives ``token`` to the device with the Wi-Fi credentials and follows the pairing by
/// ``id``. Valid until ``expiresAt`` (Unix seconds), once. The token is a secret: the
/// description leaves it out.
public struct PairingToken: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var token: String
    public var expiresAt: Int64
    public var productKey: String?
    public var homeID: Int64?

    init(_ body: PairingTokenBody) {
        id = body.id
        token = body.token
        expiresAt = body.expireAt
        productKey = body.productKey
        homeID = body.homeID
    }

    public var description: String { "PairingToken(id: \(id), token: <redacted>, expiresAt: \(expiresAt))" }
}

/// Where a pairing stands (``TetherCloudAPI/pairingStatus(_:id:)``, the `s2c_pairing` push).
public struct PairingStatus: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        /// No device presented the token yet.
        case pending
        /// A device presented it and is bound to the user.
        case bound
        /// A device presented it and was refused: ``PairingStatus/errorCode`` says why.
        case refused
        /// Its ten minutes passed with no device.
        case expired
    }

    public var id: String
    public var state: State
    public var did: String?
    public var productKey: String?
    public var mac: String?
    /// The binding's role, once bound.
    public var role: String?
    /// The home the device was placed in.
    public var homeID: Int64?
    /// The cloud's code: why the device was refused, or why a bound device is not in the home.
    public var errorCode: Int?
    public var message: String?

    init(_ body: PairingStatusBody) {
        id = body.id
        state = State(rawValue: body.state.rawValue) ?? .pending
        did = body.did
        productKey = body.productKey
        mac = body.mac
        role = body.role
        homeID = body.homeID
        errorCode = body.errorCode
        message = body.message
    }
}

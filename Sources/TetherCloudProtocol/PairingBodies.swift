public import TetherCore

/// `POST /app/pairing_tokens` (Tether): what a pairing token is for. Both are optional: a token
/// for a product binds only that product's devices (another product's is refused, 9516); a
/// token for a home places the device in it once bound (the user must be its owner or an admin).
public struct PairingTokenRequestBody: Sendable, Hashable {
    public var productKey: String?
    public var homeID: Int64?

    public init(productKey: String? = nil, homeID: Int64? = nil) {
        self.productKey = productKey
        self.homeID = homeID
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(productKey: try reader.optionalString("product_key"), homeID: try reader.optionalInt("home_id"))
    }

    public var json: JSONValue {
        var object: JSONObject = [:]
        if let productKey { object["product_key"] = .string(productKey) }
        if let homeID { object["home_id"] = .int(homeID) }
        return .object(object)
    }
}

/// A pairing token (Tuya's AP-mode token, in Tether's words): the app hands it to a new device
/// with the Wi-Fi credentials; the device presents it when it first reaches the cloud
/// (`thing/pairing/activate`), and the cloud binds it to the user who asked for the token. Valid
/// ten minutes, once. `id` names it in the status and the pushes; the token itself is a secret
/// (its description leaves it out).
public struct PairingTokenBody: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var token: String
    public var expireAt: Int64
    public var productKey: String?
    public var homeID: Int64?

    public init(id: String, token: String, expireAt: Int64, productKey: String? = nil, homeID: Int64? = nil) {
        self.id = id
        self.token = token
        self.expireAt = expireAt
        self.productKey = productKey
        self.homeID = homeID
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.text("id"), token: try reader.text("token"), expireAt: try reader.int("expire_at"),
            productKey: try reader.optionalString("product_key"), homeID: try reader.optionalInt("home_id"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["id": .string(id), "token": .string(token), "expire_at": .int(expireAt)]
        if let productKey { object["product_key"] = .string(productKey) }
        if let homeID { object["home_id"] = .int(homeID) }
        return .object(object)
    }

    public var description: String { "PairingTokenBody(id: \(id), token: <redacted>, expireAt: \(expireAt))" }
}

/// Where a pairing stands.
public enum PairingState: String, Sendable, Hashable, CaseIterable {
    /// No device presented the token yet.
    case pending
    /// A device presented it and is bound to the token's user.
    case bound
    /// A device presented it and was refused (``PairingStatusBody/errorCode`` says why); the
    /// token is used up.
    case refused
    /// Ten minutes passed with no device.
    case expired
}

/// `GET /app/pairing_tokens/{id}` and the `s2c_pairing` push (Tether): the outcome of a pairing.
public struct PairingStatusBody: Sendable, Hashable {
    public var id: String
    public var state: PairingState
    /// The device that presented the token.
    public var did: String?
    public var productKey: String?
    public var mac: String?
    /// The binding's role, once bound.
    public var role: String?
    /// The home the device was placed in, once bound with a home's token.
    public var homeID: Int64?
    /// Why the device was refused (a ``CloudError`` code), or why it is bound but not in the home.
    public var errorCode: Int?
    public var message: String?
    public var expireAt: Int64

    public init(
        id: String, state: PairingState, did: String? = nil, productKey: String? = nil, mac: String? = nil, role: String? = nil, homeID: Int64? = nil,
        errorCode: Int? = nil, message: String? = nil, expireAt: Int64
    ) {
        self.id = id
        self.state = state
        self.did = did
        self.productKey = productKey
        self.mac = mac
        self.role = role
        self.homeID = homeID
        self.errorCode = errorCode
        self.message = message
        self.expireAt = expireAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let stateName = try reader.text("state")
        guard let state = PairingState(rawValue: stateName) else { throw CloudBodyError(field: "state", "is not a pairing state") }
        self.init(
            id: try reader.text("id"), state: state, did: try reader.optionalString("did"), productKey: try reader.optionalString("product_key"),
            mac: try reader.optionalString("mac"), role: try reader.optionalString("role"), homeID: try reader.optionalInt("home_id"),
            errorCode: try reader.optionalInt("error_code").map { Int(clamping: $0) }, message: try reader.optionalString("message"),
            expireAt: try reader.int("expire_at"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["id": .string(id), "state": .string(state.rawValue), "expire_at": .int(expireAt)]
        if let did { object["did"] = .string(did) }
        if let productKey { object["product_key"] = .string(productKey) }
        if let mac { object["mac"] = .string(mac) }
        if let role { object["role"] = .string(role) }
        if let homeID { object["home_id"] = .int(homeID) }
        if let errorCode { object["error_code"] = .int(Int64(errorCode)) }
        if let message { object["message"] = .string(message) }
        return .object(object)
    }
}

import TetherCloudProtocol
import TetherCore

/// A logged-in user's session with the cloud. The token is a secret: never log it.
public struct CloudSession: Hashable, Sendable, Codable {
    /// The user's id.
    public var uid: String
    /// The user token the Open API takes in `X-Gizwits-User-token`.
    public var token: String
    /// Unix seconds after which the cloud refuses the token.
    public var expireAt: Int64

    /// A session as the cloud issued it (for a `SessionStore` that keeps its own copy).
    public init(uid: String, token: String, expireAt: Int64) {
        self.uid = uid
        self.token = token
        self.expireAt = expireAt
    }

    init(json: JSONValue) throws(TetherError) {
        let body = try decodeBody("a session", json, as: SessionBody.init(json:))
        self.init(uid: body.uid, token: body.token, expireAt: body.expireAt)
    }
}

/// A user's profile, as `GET /app/users` answers it.
public struct CloudUser: Hashable, Sendable {
    /// The user's id.
    public var uid: String
    /// The login name ("" when the account has none).
    public var username: String
    /// The phone number ("" when none).
    public var phone: String
    /// The e-mail address ("" when none).
    public var email: String
    /// The display name.
    public var name: String
    /// Whether this is an anonymous (phone-id) account.
    public var isAnonymous: Bool

    init(json: JSONValue) throws(TetherError) {
        let body = try decodeBody("a user", json, as: UserBody.init(json:))
        uid = body.uid
        username = body.username
        phone = body.phone
        email = body.email
        name = body.name
        isAnonymous = body.isAnonymous
    }
}

/// A device bound to the user, as the cloud lists it.
public struct CloudDevice: Hashable, Sendable {
    /// The device's id.
    public var did: String
    /// The product it belongs to.
    public var productKey: String
    /// The product's name.
    public var productName: String
    /// The MAC address as the cloud stores it (12 lowercase hex digits, or "").
    public var mac: String
    /// The device's LAN passcode, which the cloud gives to users bound to it.
    public var passcode: String
    /// Whether the device is connected to the cloud now.
    public var isOnline: Bool
    /// Whether an administrator disabled the device.
    public var isDisabled: Bool
    /// The user's remark on the device.
    public var remark: String
    /// The user's name for the device (`dev_alias`).
    public var alias: String
    /// `special`, `normal`, `owner` or `guest`.
    public var role: String
    /// Where apps reach the cloud's WebSocket M2M API for this device.
    public var host: String
    /// The WebSocket port at `host`.
    public var webSocketPort: Int
    /// The home the device is placed in, and its room there, when the user is a member of
    /// that home (Tether extension).
    public var homeID: Int64?
    public var roomID: Int64?

    init(json: JSONValue) throws(TetherError) {
        self.init(body: try decodeBody("a device", json, as: DeviceBody.init(json:)))
    }

    init(body: DeviceBody) {
        did = body.did
        productKey = body.productKey
        productName = body.productName
        mac = body.mac
        passcode = body.passcode
        isOnline = body.isOnline
        isDisabled = body.isDisabled
        remark = body.remark
        alias = body.alias
        role = body.role
        host = body.host
        webSocketPort = Int(clamping: body.webSocketPort)
        homeID = body.homeID
        roomID = body.roomID
    }
}

/// A command of the cloud's ledger (Tether extension): where a control is in its life.
public struct CloudCommand: Hashable, Sendable {
    /// The ledger id (``TetherCloudAPI/command(_:id:)``).
    public var id: Int64
    /// The device the command is for.
    public var did: String
    /// `accepted`, `queued`, `sent`, `acknowledged`, `applied`, `rejected`, `expired`, `failed`.
    public var state: String
    /// The device's code when it answered (200 = accepted).
    public var code: Int?
    /// Why the command failed or was rejected ("" otherwise).
    public var message: String

    /// A ledger entry (`GET /app/commands/{id}`), or a command just accepted (`command_id`).
    init(json: JSONValue) throws(TetherError) {
        if json["command_id"] != nil {
            let accepted = try decodeBody("a command", json, as: CommandAcceptedBody.init(json:))
            self.init(id: accepted.commandID, did: "", state: accepted.state, code: nil, message: "")
        } else {
            let body = try decodeBody("a command", json, as: CommandBody.init(json:))
            self.init(id: body.id, did: body.did, state: body.state, code: body.code, message: body.message)
        }
    }

    init(id: Int64, did: String, state: String, code: Int?, message: String) {
        self.id = id
        self.did = did
        self.state = state
        self.code = code
        self.message = message
    }
}

/// A body the cloud answered, or the SDK's error for a cloud that answered something else.
func decodeBody<Body>(_ what: String, _ json: JSONValue, as decode: (JSONValue) throws(CloudBodyError) -> Body) throws(TetherError) -> Body {
    do {
        return try decode(json)
    } catch {
        throw TetherError(.unexpectedCloudResponse, "\(what) that does not read: \(error)")
    }
}

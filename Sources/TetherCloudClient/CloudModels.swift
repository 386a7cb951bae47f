import TetherCore

/// A logged-in user's session with the cloud. The token is a secret: never log it.
public struct CloudSession: Hashable, Sendable, Codable {
    /// The user's id.
    public var uid: String
    /// The user token the Open API takes in `X-Gizwits-User-token`.
    public var token: String
    /// Unix seconds after which the cloud refuses the token.
    public var expireAt: Int64

    /// A session as the cloud issued it (for a ``SessionStore`` that keeps its own copy).
    public init(uid: String, token: String, expireAt: Int64) {
        self.uid = uid
        self.token = token
        self.expireAt = expireAt
    }

    init(json: JSONValue) throws(TetherError) {
        guard let uid = json["uid"]?.stringValue, let token = json["token"]?.stringValue,
              case .int(let expireAt)? = json["expire_at"]
        else {
            throw TetherError(.unexpectedCloudResponse, "expected {uid, token, expire_at}")
        }
        self.init(uid: uid, token: token, expireAt: expireAt)
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
        guard let uid = json["uid"]?.stringValue else { throw TetherError(.unexpectedCloudResponse, "a user without uid") }
        self.uid = uid
        username = json["username"]?.stringValue ?? ""
        phone = json["phone"]?.stringValue ?? ""
        email = json["email"]?.stringValue ?? ""
        name = json["name"]?.stringValue ?? ""
        isAnonymous = json["is_anonymous"] == .bool(true)
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

    init(json: JSONValue) throws(TetherError) {
        guard let did = json["did"]?.stringValue, let productKey = json["product_key"]?.stringValue else {
            throw TetherError(.unexpectedCloudResponse, "a device without did or product_key")
        }
        self.did = did
        self.productKey = productKey
        productName = json["product_name"]?.stringValue ?? ""
        mac = json["mac"]?.stringValue ?? ""
        passcode = json["passcode"]?.stringValue ?? ""
        isOnline = json["is_online"] == .bool(true)
        isDisabled = json["is_disabled"] == .bool(true)
        remark = json["remark"]?.stringValue ?? ""
        alias = json["dev_alias"]?.stringValue ?? ""
        role = json["role"]?.stringValue ?? ""
        host = json["host"]?.stringValue ?? ""
        if case .int(let port)? = json["ws_port"] { webSocketPort = Int(port) } else { webSocketPort = 0 }
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

    init(json: JSONValue) throws(TetherError) {
        guard case .int(let id)? = json["id"] ?? json["command_id"], let state = json["state"]?.stringValue else {
            throw TetherError(.unexpectedCloudResponse, "a command without id or state")
        }
        self.id = id
        did = json["did"]?.stringValue ?? ""
        self.state = state
        if case .int(let code)? = json["code"] { self.code = Int(code) } else { code = nil }
        message = json["message"]?.stringValue ?? ""
    }
}

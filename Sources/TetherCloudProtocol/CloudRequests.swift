public import TetherCore

// What apps send the Open API, as types: the SDK writes them, the cloud reads them. Decoding
// is lenient where the reference's clients are (a number may come as a string, as in a form
// post) and strict about what the cloud needs: a required string is also non-empty.

/// `POST /app/users`: one of the reference's ways to register or log in.
public enum RegistrationBody: Sendable, Hashable {
    case username(String, password: String)
    case phone(String, code: String, password: String)
    /// The cloud mails a confirmation link; the login waits for it.
    case email(String, password: String)
    /// The same uid every time for the same `phone_id`.
    case anonymous(phoneID: String)
    /// A third party's ID token (a JWT) whose subject is `uid`.
    case thirdParty(source: String, uid: String, token: String)

    /// The first form the body matches, in the reference's order: `phone_id`, a third party
    /// (`src` or `token`), `username`, `phone`, `email`.
    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        if let phoneID = try reader.optionalString("phone_id") {
            self = .anonymous(phoneID: phoneID)
        } else if reader.value("src") != nil || reader.value("token") != nil {
            self = .thirdParty(source: try reader.text("src"), uid: try reader.text("uid"), token: try reader.text("token"))
        } else if let username = try reader.optionalString("username") {
            self = .username(username, password: try reader.text("password"))
        } else if let phone = try reader.optionalString("phone") {
            self = .phone(phone, code: try reader.text("code"), password: try reader.text("password"))
        } else if let email = try reader.optionalString("email") {
            self = .email(email, password: try reader.text("password"))
        } else {
            throw CloudBodyError(field: "the body", "must hold one of: phone_id; username and password; phone, password and code; email and password")
        }
    }

    public var json: JSONValue {
        switch self {
        case .username(let name, let password): ["username": .string(name), "password": .string(password)]
        case .phone(let phone, let code, let password): ["phone": .string(phone), "code": .string(code), "password": .string(password)]
        case .email(let email, let password): ["email": .string(email), "password": .string(password)]
        case .anonymous(let phoneID): ["phone_id": .string(phoneID)]
        case .thirdParty(let source, let uid, let token): ["src": .string(source), "uid": .string(uid), "token": .string(token)]
        }
    }
}

/// `POST /app/login`: `username` may also be an e-mail address or a phone number.
public struct LoginBody: Sendable, Hashable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(username: try reader.text("username"), password: try reader.text("password"))
    }

    public var json: JSONValue { ["username": .string(username), "password": .string(password)] }
}

/// `PUT /app/users`: profile fields, an anonymous user's conversion, a new phone or e-mail
/// address, a new password. Which fields go together is the cloud's rule, checked where the
/// user is known (only an anonymous user takes a username).
public struct UserUpdateBody: Sendable, Hashable {
    public static let profileFields = ["name", "gender", "birthday", "address", "lang", "remark"]

    /// An anonymous user takes a name and a password.
    public var username: String?
    public var password: String?
    public var oldPassword: String?
    public var newPassword: String?
    /// With the SMS `code` sent to it.
    public var phone: String?
    public var code: String?
    public var email: String?
    /// Any of ``profileFields``.
    public var profile: [String: String]

    public init(
        username: String? = nil, password: String? = nil, oldPassword: String? = nil, newPassword: String? = nil,
        phone: String? = nil, code: String? = nil, email: String? = nil, profile: [String: String] = [:]
    ) {
        self.username = username
        self.password = password
        self.oldPassword = oldPassword
        self.newPassword = newPassword
        self.phone = phone
        self.code = code
        self.email = email
        self.profile = profile
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        var profile: [String: String] = [:]
        for field in Self.profileFields {
            if let value = try reader.optionalString(field) { profile[field] = value }
        }
        self.init(
            username: try reader.optionalString("username"), password: try reader.optionalString("password"),
            oldPassword: try reader.optionalString("old_pwd"), newPassword: try reader.optionalString("new_pwd"),
            phone: try reader.optionalString("phone"), code: try reader.optionalString("code"), email: try reader.optionalString("email"),
            profile: profile
        )
    }

    public var json: JSONValue {
        var object = JSONObject()
        for (field, value) in profile { object[field] = .string(value) }
        let named: [(String, String?)] = [
            ("username", username), ("password", password), ("old_pwd", oldPassword), ("new_pwd", newPassword),
            ("phone", phone), ("code", code), ("email", email),
        ]
        for case (let field, let value?) in named { object[field] = .string(value) }
        return .object(object)
    }
}

/// `POST /app/reset_password`.
public enum PasswordResetBody: Sendable, Hashable {
    /// Mails a link (answered the same whether or not the address has an account).
    case email(String)
    /// Resets at once with an SMS code.
    case phone(String, code: String, newPassword: String)

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        if let email = try reader.optionalString("email") {
            self = .email(email)
        } else {
            self = .phone(try reader.text("phone"), code: try reader.text("code"), newPassword: try reader.text("new_pwd"))
        }
    }

    public var json: JSONValue {
        switch self {
        case .email(let email): ["email": .string(email)]
        case .phone(let phone, let code, let newPassword): ["phone": .string(phone), "code": .string(code), "new_pwd": .string(newPassword)]
        }
    }
}

/// `POST /app/reset_password/confirm` (Tether): the token of the reset e-mail and the new password.
public struct PasswordResetConfirmBody: Sendable, Hashable {
    /// A secret: never log it.
    public var token: String
    public var newPassword: String

    public init(token: String, newPassword: String) {
        self.token = token
        self.newPassword = newPassword
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(token: try reader.text("token"), newPassword: try reader.text("new_pwd"))
    }

    public var json: JSONValue { ["token": .string(token), "new_pwd": .string(newPassword)] }
}

/// `POST /app/sms_code`: `{phone}` sends a code, `{phone, code}` checks one.
public struct SMSCodeBody: Sendable, Hashable {
    public var phone: String
    public var code: String?

    public init(phone: String, code: String? = nil) {
        self.phone = phone
        self.code = code
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(phone: try reader.text("phone"), code: try reader.optionalString("code"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["phone": .string(phone)]
        if let code { object["code"] = .string(code) }
        return .object(object)
    }
}

/// `POST /app/bindings`: devices by did and passcode.
public struct BindBody: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var did: String
        public var passcode: String
        public var remark: String?
        public var alias: String?

        public init(did: String, passcode: String, remark: String? = nil, alias: String? = nil) {
            self.did = did
            self.passcode = passcode
            self.remark = remark
            self.alias = alias
        }
    }

    public static let maximumDevices = 100

    public var devices: [Entry]

    public init(devices: [Entry]) { self.devices = devices }

    public init(json: JSONValue) throws(CloudBodyError) {
        let entries = try BodyReader(json).objects("devices", maximum: Self.maximumDevices)
        self.init(
            devices: try entries.map { entry throws(CloudBodyError) in
                Entry(
                    did: try entry.text("did"), passcode: try entry.text("passcode"),
                    remark: try entry.optionalString("remark"), alias: try entry.optionalString("dev_alias")
                )
            })
    }

    public var json: JSONValue {
        [
            "devices": .array(
                devices.map { entry in
                    var object: JSONObject = ["did": .string(entry.did), "passcode": .string(entry.passcode)]
                    if let remark = entry.remark { object["remark"] = .string(remark) }
                    if let alias = entry.alias { object["dev_alias"] = .string(alias) }
                    return .object(object)
                })
        ]
    }
}

/// `DELETE /app/bindings`: the devices to unbind.
public struct DidListBody: Sendable, Hashable {
    public var dids: [String]

    public init(dids: [String]) { self.dids = dids }

    public init(json: JSONValue) throws(CloudBodyError) {
        let entries = try BodyReader(json).objects("devices", maximum: BindBody.maximumDevices)
        self.init(dids: try entries.map { entry throws(CloudBodyError) in try entry.text("did") })
    }

    public var json: JSONValue { ["devices": .array(dids.map { ["did": .string($0)] })] }
}

/// `PUT /app/bindings/{did}`: the user's remark, alias and labels; nil leaves one as it is.
public struct BindingUpdateBody: Sendable, Hashable {
    public var remark: String?
    public var alias: String?
    public var labels: [String]?

    public init(remark: String? = nil, alias: String? = nil, labels: [String]? = nil) {
        self.remark = remark
        self.alias = alias
        self.labels = labels
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(remark: try reader.optionalString("remark"), alias: try reader.optionalString("dev_alias"), labels: try reader.optionalStrings("dev_label"))
        guard remark != nil || alias != nil || labels != nil else {
            throw CloudBodyError(field: "the body", "must hold at least one of remark, dev_alias, dev_label")
        }
    }

    public var json: JSONValue {
        var object = JSONObject()
        if let remark { object["remark"] = .string(remark) }
        if let alias { object["dev_alias"] = .string(alias) }
        if let labels { object["dev_label"] = .array(labels.map(JSONValue.string)) }
        return .object(object)
    }
}

/// `POST /app/bind_mac` (signed with `X-Gizwits-Timestamp` and `X-Gizwits-Signature`).
public struct BindMACBody: Sendable, Hashable {
    public var productKey: String
    public var mac: String
    public var remark: String?
    public var alias: String?
    /// On a product with sharing: become the owner.
    public var setOwner: Bool

    public init(productKey: String, mac: String, remark: String? = nil, alias: String? = nil, setOwner: Bool = false) {
        self.productKey = productKey
        self.mac = mac
        self.remark = remark
        self.alias = alias
        self.setOwner = setOwner
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            productKey: try reader.text("product_key"), mac: try reader.text("mac"), remark: try reader.optionalString("remark"),
            alias: try reader.optionalString("dev_alias"), setOwner: try reader.lenientInt("set_owner") == 1
        )
    }

    public var json: JSONValue {
        var object: JSONObject = ["product_key": .string(productKey), "mac": .string(mac)]
        if let remark { object["remark"] = .string(remark) }
        if let alias { object["dev_alias"] = .string(alias) }
        if setOwner { object["set_owner"] = .int(1) }
        return .object(object)
    }
}

/// `POST /app/control/{did}`: data points, or raw bytes; Tether's `queue_ttl` lets the command
/// wait for an offline device.
public struct ControlBody: Sendable, Hashable {
    public enum Command: Sendable, Hashable {
        case attrs(JSONObject)
        case raw([UInt8])
    }

    public var command: Command
    /// Seconds.
    public var queueTTL: Int64?

    public init(_ command: Command, queueTTL: Int64? = nil) {
        self.command = command
        self.queueTTL = queueTTL
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let command: Command
        if let attrs = reader.value("attrs") {
            guard let object = attrs.objectValue, !object.isEmpty else { throw CloudBodyError(field: "attrs", "must be a non-empty object") }
            command = .attrs(object)
        } else if let raw = reader.value("raw") {
            command = .raw(try Self.bytes(raw))
        } else {
            throw CloudBodyError(field: "the body", "must hold attrs or raw")
        }
        self.init(command, queueTTL: try reader.lenientInt("queue_ttl"))
    }

    static func bytes(_ value: JSONValue) throws(CloudBodyError) -> [UInt8] {
        guard let items = value.arrayValue else { throw CloudBodyError(field: "raw", "must be an array of bytes") }
        return try items.map { item throws(CloudBodyError) in
            guard case .int(let number) = item, let byte = UInt8(exactly: number) else {
                throw CloudBodyError(field: "raw", "must hold integers 0…255")
            }
            return byte
        }
    }

    public var json: JSONValue {
        var object = JSONObject()
        switch command {
        case .attrs(let attrs): object["attrs"] = .object(attrs)
        case .raw(let bytes): object["raw"] = .array(bytes.map { .int(Int64($0)) })
        }
        if let queueTTL { object["queue_ttl"] = .int(queueTTL) }
        return .object(object)
    }
}

/// `POST /app/devices/{did}/services/{identifier}` (Tether): a service call of the device's model.
public struct ServiceCallBody: Sendable, Hashable {
    public var params: JSONValue
    /// Seconds, as for ``ControlBody/queueTTL``.
    public var queueTTL: Int64?

    public init(params: JSONValue = .object([:]), queueTTL: Int64? = nil) {
        self.params = params
        self.queueTTL = queueTTL
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(params: reader.value("params") ?? .object([:]), queueTTL: try reader.lenientInt("queue_ttl"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["params": params]
        if let queueTTL { object["queue_ttl"] = .int(queueTTL) }
        return .object(object)
    }
}

public import TetherCore

/// `POST /app/sharing` (`gizwits-openapi.md` §2.5): the owner invites a user (type 0, by uid,
/// username, e-mail or phone; valid 24 h) or makes a QR code (type 1, valid 15 minutes).
/// `duration` limits how long the guest may use the device after accepting, in minutes.
public struct SharingCreateBody: Sendable, Hashable {
    public enum Kind: Int64, Sendable, Hashable {
        case user = 0
        case qrCode = 1
    }

    /// Who receives a type-0 invitation.
    public enum Receiver: Sendable, Hashable {
        case uid(String)
        case username(String)
        case email(String)
        case phone(String)
    }

    public var kind: Kind
    public var did: String
    public var receiver: Receiver?
    /// 1…1440 minutes; nil: no limit.
    public var duration: Int64?

    public init(kind: Kind, did: String, receiver: Receiver? = nil, duration: Int64? = nil) {
        self.kind = kind
        self.did = did
        self.receiver = receiver
        self.duration = duration
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let kind = Kind(rawValue: try reader.int("type")) else { throw CloudBodyError(field: "type", "is 0 (to a user) or 1 (QR code)") }
        let receivers: [Receiver] = [
            try reader.optionalString("uid").map(Receiver.uid), try reader.optionalString("username").map(Receiver.username),
            try reader.optionalString("email").map(Receiver.email), try reader.optionalString("phone").map(Receiver.phone),
        ].compactMap { $0 }
        switch kind {
        case .user:
            guard receivers.count == 1 else { throw CloudBodyError(field: "uid", "one of uid, username, email or phone names the receiver") }
        case .qrCode:
            guard receivers.isEmpty else { throw CloudBodyError(field: "uid", "a QR-code invitation names no receiver") }
        }
        let duration = try reader.optionalInt("duration")
        if let duration, !(1...1440).contains(duration) { throw CloudBodyError(field: "duration", "is 1 to 1440 minutes") }
        self.init(kind: kind, did: try reader.text("did"), receiver: receivers.first, duration: duration)
    }

    public var json: JSONValue {
        var object: JSONObject = ["type": .int(kind.rawValue), "did": .string(did)]
        switch receiver {
        case .uid(let uid)?: object["uid"] = .string(uid)
        case .username(let name)?: object["username"] = .string(name)
        case .email(let email)?: object["email"] = .string(email)
        case .phone(let phone)?: object["phone"] = .string(phone)
        case nil: break
        }
        if let duration { object["duration"] = .int(duration) }
        return .object(object)
    }
}

/// What `POST /app/sharing` answers: the invitation's `id`, and `qr_content` for a QR code
/// (`type=share&code=…`).
public struct SharingCreatedBody: Sendable, Hashable {
    public var id: Int64
    public var qrContent: String?

    public init(id: Int64, qrContent: String? = nil) {
        self.id = id
        self.qrContent = qrContent
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(id: try reader.int("id"), qrContent: try reader.optionalString("qr_content"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["id": .int(id)]
        if let qrContent { object["qr_content"] = .string(qrContent) }
        return .object(object)
    }

    /// The code in a `qr_content` (`type=share&code=…`); nil for other text.
    public static func code(inQRContent content: String) -> String? {
        var fields: [Substring: Substring] = [:]
        for pair in content.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["type"] == "share", let code = fields["code"], !code.isEmpty else { return nil }
        return String(code)
    }
}

/// One invitation as `GET /app/sharing` lists it: the user fields describe the other party
/// (the guest for invitations sent, the owner for those received), masked.
public struct SharingEntryBody: Sendable, Hashable {
    /// 0 pending, 1 accepted, 2 refused, 3 cancelled (or revoked after it was accepted).
    public enum Status: Int64, Sendable, Hashable, CaseIterable {
        case pending = 0
        case accepted = 1
        case refused = 2
        case cancelled = 3
    }

    public var id: Int64
    public var kind: SharingCreateBody.Kind
    public var uid: String
    public var username: String
    public var userAlias: String
    public var email: String
    public var phone: String
    public var did: String
    public var productName: String
    public var deviceAlias: String
    public var status: Status
    /// Unix seconds.
    public var createdAt: Int64
    public var updatedAt: Int64
    public var expiredAt: Int64

    public init(
        id: Int64, kind: SharingCreateBody.Kind, uid: String, username: String, userAlias: String, email: String, phone: String, did: String,
        productName: String, deviceAlias: String, status: Status, createdAt: Int64, updatedAt: Int64, expiredAt: Int64
    ) {
        self.id = id
        self.kind = kind
        self.uid = uid
        self.username = username
        self.userAlias = userAlias
        self.email = email
        self.phone = phone
        self.did = did
        self.productName = productName
        self.deviceAlias = deviceAlias
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiredAt = expiredAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let kind = SharingCreateBody.Kind(rawValue: try reader.int("type")) else { throw CloudBodyError(field: "type", "is 0 or 1") }
        guard let status = Status(rawValue: try reader.int("status")) else { throw CloudBodyError(field: "status", "is 0 to 3") }
        self.init(
            id: try reader.int("id"), kind: kind, uid: try reader.string("uid"), username: try reader.optionalString("username") ?? "",
            userAlias: try reader.optionalString("user_alias") ?? "", email: try reader.optionalString("email") ?? "",
            phone: try reader.optionalString("phone") ?? "", did: try reader.string("did"), productName: try reader.optionalString("product_name") ?? "",
            deviceAlias: try reader.optionalString("dev_alias") ?? "", status: status, createdAt: try reader.optionalInt("created_at") ?? 0,
            updatedAt: try reader.optionalInt("updated_at") ?? 0, expiredAt: try reader.optionalInt("expired_at") ?? 0)
    }

    public var json: JSONValue {
        [
            "id": .int(id), "type": .int(kind.rawValue), "uid": .string(uid), "username": .string(username), "user_alias": .string(userAlias),
            "email": .string(email), "phone": .string(phone), "did": .string(did), "product_name": .string(productName),
            "dev_alias": .string(deviceAlias), "status": .int(status.rawValue), "created_at": .int(createdAt), "updated_at": .int(updatedAt),
            "expired_at": .int(expiredAt),
        ]
    }
}

/// `GET /app/sharing/code/{code}`: what a QR invitation offers, before it is accepted.
public struct SharingCodeBody: Sendable, Hashable {
    /// The owner, masked.
    public var owner: String
    public var productName: String
    public var deviceAlias: String
    /// Unix seconds.
    public var expiredAt: Int64

    public init(owner: String, productName: String, deviceAlias: String, expiredAt: Int64) {
        self.owner = owner
        self.productName = productName
        self.deviceAlias = deviceAlias
        self.expiredAt = expiredAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            owner: try reader.string("owner"), productName: try reader.optionalString("product_name") ?? "",
            deviceAlias: try reader.optionalString("dev_alias") ?? "", expiredAt: try reader.int("expired_at"))
    }

    public var json: JSONValue {
        ["owner": .string(owner), "product_name": .string(productName), "dev_alias": .string(deviceAlias), "expired_at": .int(expiredAt)]
    }
}

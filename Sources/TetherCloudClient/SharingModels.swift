import TetherCloudProtocol
public import TetherCore

/// An entry of the user's message centre (``TetherCloudAPI/messages(_:limit:skip:)``), pushed
/// as it is made while the real-time connection is up.
public struct CloudMessage: Hashable, Sendable {
    public var id: Int64
    /// 1: device sharing.
    public var type: Int64
    public var isRead: Bool
    /// What happened, for people.
    public var content: String
    /// What it is about, for apps: `event` (`invited`, `accepted`, `refused`, `cancelled`,
    /// `revoked`, `transferred`), `sharing_id`, `did`.
    public var data: JSONValue
    /// Unix seconds.
    public var createdAt: Int64

    init(_ body: MessageBody) {
        id = body.id
        type = body.type
        isRead = body.status == .read
        content = body.content
        data = body.data
        createdAt = body.createdAt
    }
}

/// An invitation to use a device (``TetherCloudAPI/invitations(_:sent:status:)``).
public struct SharingInvitation: Hashable, Sendable {
    public enum Status: Int64, Hashable, Sendable {
        case pending = 0
        case accepted = 1
        case refused = 2
        case cancelled = 3
    }

    public var id: Int64
    /// By QR code rather than to a named user.
    public var isQRCode: Bool
    /// The other party: the guest of an invitation sent, the owner of one received (masked).
    public var uid: String
    public var username: String
    public var alias: String
    public var did: String
    public var productName: String
    public var deviceAlias: String
    public var status: Status
    /// Unix seconds.
    public var expiresAt: Int64

    init(_ body: SharingEntryBody) {
        id = body.id
        isQRCode = body.kind == .qrCode
        uid = body.uid
        username = body.username
        alias = body.userAlias
        did = body.did
        productName = body.productName
        deviceAlias = body.deviceAlias
        status = Status(rawValue: body.status.rawValue) ?? .cancelled
        expiresAt = body.expiredAt
    }
}

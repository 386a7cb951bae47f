/// An error of the Open API as the cloud answers it (`{"error_code", "error_message", "detail"}`
/// with an HTTP status) and the WebSocket reports it (`error_code` in `s2c_invalid_msg` and
/// `login_res`): one table, `shared/reference/gizwits-openapi.md` §3 with Tether's additions, read
/// by the cloud to answer and by the SDK to understand.
public struct CloudError: Sendable, Hashable, CustomStringConvertible {
    /// The Open API's number (9001…).
    public let code: Int
    /// The HTTP status a REST answer carries.
    public let httpStatus: Int
    /// The reference's short message.
    public let message: String

    public init(code: Int, httpStatus: Int = 400, message: String) {
        self.code = code
        self.httpStatus = httpStatus
        self.message = message
    }

    public var description: String { "\(code) \(message)" }

    /// The catalogue's entry for `code`, if it has one.
    public static func named(_ code: Int) -> CloudError? { catalogue.first { $0.code == code } }
}

extension CloudError {
    public static let macAlreadyRegistered = CloudError(code: 9001, message: "mac already registered")
    public static let productKeyInvalid = CloudError(code: 9002, message: "product_key invalid")
    public static let appIDInvalid = CloudError(code: 9003, message: "appid invalid")
    public static let tokenInvalid = CloudError(code: 9004, message: "token invalid")
    public static let userNotExist = CloudError(code: 9005, message: "user not exist")
    public static let tokenExpired = CloudError(code: 9006, message: "token expired")
    public static let serverError = CloudError(code: 9008, httpStatus: 500, message: "server error")
    public static let codeExpired = CloudError(code: 9009, message: "code expired")
    public static let codeInvalid = CloudError(code: 9010, message: "code invalid")
    public static let deviceNotFound = CloudError(code: 9014, httpStatus: 404, message: "device not found")
    public static let formInvalid = CloudError(code: 9015, message: "form invalid")
    public static let didPasscodeInvalid = CloudError(code: 9016, message: "did or passcode invalid")
    public static let deviceNotBound = CloudError(code: 9017, httpStatus: 401, message: "device not bound")
    public static let phoneUnavailable = CloudError(code: 9018, message: "phone unavailable")
    public static let usernameUnavailable = CloudError(code: 9019, message: "username unavailable")
    public static let usernamePasswordError = CloudError(code: 9020, message: "username or password error")
    public static let sendCommandFailed = CloudError(code: 9021, message: "send command failed")
    public static let emailUnavailable = CloudError(code: 9022, message: "email unavailable")
    public static let deviceDisabled = CloudError(code: 9023, message: "device disabled")
    public static let attrInvalid = CloudError(code: 9025, message: "attr invalid")
    public static let userInvalid = CloudError(code: 9026, message: "user invalid")
    public static let schedulerNotFound = CloudError(code: 9030, httpStatus: 404, message: "scheduler not found")
    public static let sendSMSFailed = CloudError(code: 9037, message: "send sms failed")
    public static let applicationAuthInvalid = CloudError(code: 9038, message: "X-Gizwits-Application-Auth invalid")
    public static let requestThrottled = CloudError(code: 9041, httpStatus: 429, message: "request throttled")
    public static let deviceOffline = CloudError(code: 9042, message: "device offline")
    public static let timestampInvalid = CloudError(code: 9043, message: "X-Gizwits-Timestamp invalid")
    public static let signatureInvalid = CloudError(code: 9044, message: "X-Gizwits-Signature invalid")
    public static let emailNotActivated = CloudError(code: 9077, message: "email not activated")
    public static let cannotShareToSelf = CloudError(code: 9080, message: "cannot share to self")
    public static let onlyOwnerCanShare = CloudError(code: 9081, message: "only owner can share")
    public static let guestNotFound = CloudError(code: 9082, message: "guest not found")
    public static let guestAlreadyBound = CloudError(code: 9083, message: "guest already bound")
    public static let sharingNotFound = CloudError(code: 9084, httpStatus: 404, message: "sharing not found")
    public static let messageNotFound = CloudError(code: 9085, httpStatus: 404, message: "message not found")
    public static let sharingWaitingForAccept = CloudError(code: 9087, message: "sharing is waiting for accept")
    public static let sharingExpired = CloudError(code: 9088, message: "sharing is expired")
    public static let sharingCompleted = CloudError(code: 9089, message: "sharing is completed")
    public static let onlyOwnerCanBind = CloudError(code: 9092, message: "only owner can bind")
    public static let onlyOwnerCanOperate = CloudError(code: 9093, httpStatus: 403, message: "only owner can operate")
    public static let sharingAlreadyCancelled = CloudError(code: 9094, message: "sharing already cancelled")
    public static let ownerCannotUnbindSelf = CloudError(code: 9095, message: "owner cannot unbind self")
    public static let onlyGuestCanCheckQRCode = CloudError(code: 9096, httpStatus: 403, message: "only guest can check QR code")
    public static let messageAlreadyDeleted = CloudError(code: 9098, message: "message already deleted")
    public static let onlySelfCanModifyAlias = CloudError(code: 9100, httpStatus: 403, message: "only self can modify alias")
    public static let onlyReceiverCanMarkMessage = CloudError(code: 9101, httpStatus: 403, message: "only receiver can mark message")
    // Tether's own codes are 9500–9599: the Gizwits catalogue uses the codes around 9100
    // (9100 and 9101 for sharing), which apps written for it already read their way.
    /// Tether: the device took the request but did not answer it in time (an RRPC call).
    public static let deviceTimeout = CloudError(code: 9500, httpStatus: 504, message: "device did not answer in time")
    /// Tether: a shadow write named a version not greater than the shadow's (Aliyun's shadow
    /// error 409): read the shadow again and write with a greater version.
    public static let shadowVersionConflict = CloudError(code: 9501, httpStatus: 409, message: "shadow version conflict")
    /// Tether: a firmware download URL whose signature does not match or whose time is up.
    public static let downloadURLInvalid = CloudError(code: 9502, httpStatus: 403, message: "download URL invalid or expired")
    /// Tether: a guest of a shared device asked to upgrade its firmware; only the users it is
    /// bound to as owner (or, without sharing, any binder) may.
    public static let upgradeNotAllowed = CloudError(code: 9503, httpStatus: 403, message: "upgrade not allowed")
    /// Tether: the device's module already has an upgrade under way (queued, offered or in
    /// progress): wait for its end, or for its expiry.
    public static let upgradeInProgress = CloudError(code: 9504, httpStatus: 409, message: "upgrade in progress")
    /// Tether: no such home, or the user is not one of its members (the two are not told apart).
    public static let homeNotFound = CloudError(code: 9505, httpStatus: 404, message: "home not found")
    /// Tether: the user's role in the home does not allow it (a member managing rooms, an admin
    /// deleting the home or inviting an admin).
    public static let homeRoleInsufficient = CloudError(code: 9506, httpStatus: 403, message: "home role does not allow it")
    /// Tether: the device is already placed in another home; take it out of that one first.
    public static let deviceInAnotherHome = CloudError(code: 9507, httpStatus: 409, message: "device is in another home")
    /// Tether: no such room in this home, or no such device in it.
    public static let roomNotFound = CloudError(code: 9508, httpStatus: 404, message: "room or device not found in this home")
    /// Tether: the user is already a member of the home.
    public static let alreadyHomeMember = CloudError(code: 9509, httpStatus: 409, message: "already a member of the home")
    /// Tether: the home's owner cannot leave it or lose the role; it deletes the home instead.
    public static let homeOwnerCannotLeave = CloudError(code: 9510, httpStatus: 403, message: "home owner cannot leave")
    /// Tether: a Tuya local key cannot be revoked, so only the device's owner receives it.
    public static let onlyOwnerGetsLocalKey = CloudError(code: 9511, httpStatus: 403, message: "only owner gets the local key")
    /// Tether: the device has no Tuya local key in this cloud.
    public static let noTuyaLocalKey = CloudError(code: 9512, httpStatus: 404, message: "no tuya local key")
    /// Tether: a device presented a pairing token this cloud never issued (another deployment's,
    /// or mistyped).
    public static let pairingTokenUnknown = CloudError(code: 9513, httpStatus: 404, message: "pairing token unknown")
    /// Tether: the pairing token's ten minutes are up, or the session that asked for it ended.
    public static let pairingTokenExpired = CloudError(code: 9514, httpStatus: 410, message: "pairing token expired")
    /// Tether: the pairing token was already used (by this device or another).
    public static let pairingTokenUsed = CloudError(code: 9515, httpStatus: 409, message: "pairing token already used")
    /// Tether: the pairing token was issued for a device of another product.
    public static let pairingTokenForeign = CloudError(code: 9516, httpStatus: 403, message: "pairing token is for another product")
    /// Tether: no such group, or not the user's (the reference has no code of its own for it).
    public static let groupNotFound = CloudError(code: 9517, httpStatus: 404, message: "group not found")
    /// No such scene, or not the user's: the reference's 9220 (its 9221, "not yours", is not
    /// answered, so that a scene's existence is not told to others).
    public static let sceneNotFound = CloudError(code: 9220, httpStatus: 404, message: "scene not found")
    /// Tether: no such route, command or session.
    public static let notFound = CloudError(code: 9999, httpStatus: 404, message: "not found")
    /// Tether: the HTTP method is not served at this path.
    public static let methodNotAllowed = CloudError(code: 9999, httpStatus: 405, message: "method not allowed")

    /// Every code the cloud answers (`GET /errors`), each once.
    public static let catalogue: [CloudError] = [
        .macAlreadyRegistered, .productKeyInvalid, .appIDInvalid, .tokenInvalid, .userNotExist, .tokenExpired,
        .serverError, .codeExpired, .codeInvalid, .deviceNotFound, .formInvalid, .didPasscodeInvalid, .deviceNotBound,
        .phoneUnavailable, .usernameUnavailable, .usernamePasswordError, .sendCommandFailed, .emailUnavailable,
        .deviceDisabled, .attrInvalid, .userInvalid, .schedulerNotFound, .sendSMSFailed, .applicationAuthInvalid, .requestThrottled,
        .deviceOffline, .timestampInvalid, .signatureInvalid, .emailNotActivated, .cannotShareToSelf, .onlyOwnerCanShare, .guestNotFound, .guestAlreadyBound,
        .sharingNotFound, .sharingWaitingForAccept, .sharingExpired, .sharingCompleted, .onlyOwnerCanBind, .onlyOwnerCanOperate, .sharingAlreadyCancelled,
        .ownerCannotUnbindSelf, .onlyGuestCanCheckQRCode, .messageNotFound, .messageAlreadyDeleted, .onlySelfCanModifyAlias, .onlyReceiverCanMarkMessage,
        .deviceTimeout,
        .shadowVersionConflict,
        .downloadURLInvalid, .upgradeNotAllowed, .upgradeInProgress,
        .homeNotFound, .homeRoleInsufficient, .deviceInAnotherHome, .roomNotFound, .alreadyHomeMember, .homeOwnerCannotLeave,
        .onlyOwnerGetsLocalKey, .noTuyaLocalKey,
        .pairingTokenUnknown, .pairingTokenExpired, .pairingTokenUsed, .pairingTokenForeign, .groupNotFound, .sceneNotFound,
        .notFound,
    ]
}

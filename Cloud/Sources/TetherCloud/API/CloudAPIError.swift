public import Hummingbird
public import TetherCloudProtocol
import TetherCore

/// An error answered to an API client, with the Gizwits Open API's numeric code and HTTP
/// status, as `{"error_code": 9004, "error_message": "token invalid", "detail": "…"}`.
public struct CloudAPIError: HTTPResponseError, CustomStringConvertible, Sendable {
    public var code: Int
    public var status: HTTPResponse.Status
    public var message: String
    public var detail: String

    public init(code: Int, status: HTTPResponse.Status = .badRequest, message: String, detail: String = "") {
        self.code = code
        self.status = status
        self.message = message
        self.detail = detail
    }

    public var description: String { "\(code) \(message)\(detail.isEmpty ? "" : ": \(detail)")" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body: JSONValue = .object([
            "error_code": .int(Int64(code)),
            "error_message": .string(message),
            "detail": .string(detail),
        ])
        var response = Response.json(body, status: status)
        if code == CloudError.requestThrottled.code {
            response.headers[.retryAfter] = retryAfter.map(String.init) ?? "60"
        }
        return response
    }

    /// Seconds a throttled client should wait, sent as `Retry-After`.
    public var retryAfter: Int64?

    func with(detail: String) -> CloudAPIError {
        var copy = self
        copy.detail = detail
        return copy
    }
}

// The catalogue (TetherCloudProtocol's `CloudError`, one table for the SDK and the cloud).
extension CloudAPIError {
    public init(_ error: CloudError, detail: String = "") {
        self.init(code: error.code, status: HTTPResponse.Status(code: error.httpStatus), message: error.message, detail: detail)
    }

    public static func macAlreadyRegistered(detail: String = "") -> Self { .init(.macAlreadyRegistered, detail: detail) }
    public static func appIDInvalid(detail: String = "") -> Self { .init(.appIDInvalid, detail: detail) }
    public static func tokenInvalid(detail: String = "") -> Self { .init(.tokenInvalid, detail: detail) }
    public static func userNotExist(detail: String = "") -> Self { .init(.userNotExist, detail: detail) }
    public static func tokenExpired(detail: String = "") -> Self { .init(.tokenExpired, detail: detail) }
    public static func serverError(detail: String = "") -> Self { .init(.serverError, detail: detail) }
    public static func codeExpired(detail: String = "") -> Self { .init(.codeExpired, detail: detail) }
    public static func codeInvalid(detail: String = "") -> Self { .init(.codeInvalid, detail: detail) }
    public static func productKeyInvalid(detail: String = "") -> Self { .init(.productKeyInvalid, detail: detail) }
    public static func deviceNotFound(detail: String = "") -> Self { .init(.deviceNotFound, detail: detail) }
    public static func formInvalid(detail: String = "") -> Self { .init(.formInvalid, detail: detail) }
    public static func didPasscodeInvalid(detail: String = "") -> Self { .init(.didPasscodeInvalid, detail: detail) }
    public static func deviceNotBound(detail: String = "") -> Self { .init(.deviceNotBound, detail: detail) }
    public static func phoneUnavailable(detail: String = "") -> Self { .init(.phoneUnavailable, detail: detail) }
    public static func usernameUnavailable(detail: String = "") -> Self { .init(.usernameUnavailable, detail: detail) }
    public static func usernamePasswordError(detail: String = "") -> Self { .init(.usernamePasswordError, detail: detail) }
    public static func emailUnavailable(detail: String = "") -> Self { .init(.emailUnavailable, detail: detail) }
    public static func deviceDisabled(detail: String = "") -> Self { .init(.deviceDisabled, detail: detail) }
    public static func userInvalid(detail: String = "") -> Self { .init(.userInvalid, detail: detail) }
    public static func attrInvalid(detail: String = "") -> Self { .init(.attrInvalid, detail: detail) }
    public static func schedulerNotFound(detail: String = "") -> Self { .init(.schedulerNotFound, detail: detail) }
    public static func groupNotFound(detail: String = "") -> Self { .init(.groupNotFound, detail: detail) }
    public static func sceneNotFound(detail: String = "") -> Self { .init(.sceneNotFound, detail: detail) }
    public static func deviceOffline(detail: String = "") -> Self { .init(.deviceOffline, detail: detail) }
    public static func sendSMSFailed(detail: String = "") -> Self { .init(.sendSMSFailed, detail: detail) }
    public static func applicationAuthInvalid(detail: String = "") -> Self { .init(.applicationAuthInvalid, detail: detail) }
    public static func timestampInvalid(detail: String = "") -> Self { .init(.timestampInvalid, detail: detail) }
    public static func signatureInvalid(detail: String = "") -> Self { .init(.signatureInvalid, detail: detail) }
    public static func emailNotActivated(detail: String = "") -> Self { .init(.emailNotActivated, detail: detail) }
    public static func onlyOwnerCanBind(detail: String = "") -> Self { .init(.onlyOwnerCanBind, detail: detail) }
    public static func cannotShareToSelf(detail: String = "") -> Self { .init(.cannotShareToSelf, detail: detail) }
    public static func onlyOwnerCanShare(detail: String = "") -> Self { .init(.onlyOwnerCanShare, detail: detail) }
    public static func guestNotFound(detail: String = "") -> Self { .init(.guestNotFound, detail: detail) }
    public static func guestAlreadyBound(detail: String = "") -> Self { .init(.guestAlreadyBound, detail: detail) }
    public static func sharingNotFound(detail: String = "") -> Self { .init(.sharingNotFound, detail: detail) }
    public static func sharingWaitingForAccept(detail: String = "") -> Self { .init(.sharingWaitingForAccept, detail: detail) }
    public static func sharingExpired(detail: String = "") -> Self { .init(.sharingExpired, detail: detail) }
    public static func sharingCompleted(detail: String = "") -> Self { .init(.sharingCompleted, detail: detail) }
    public static func onlyOwnerCanOperate(detail: String = "") -> Self { .init(.onlyOwnerCanOperate, detail: detail) }
    public static func sharingAlreadyCancelled(detail: String = "") -> Self { .init(.sharingAlreadyCancelled, detail: detail) }
    public static func ownerCannotUnbindSelf(detail: String = "") -> Self { .init(.ownerCannotUnbindSelf, detail: detail) }
    public static func onlyGuestCanCheckQRCode(detail: String = "") -> Self { .init(.onlyGuestCanCheckQRCode, detail: detail) }
    public static func messageNotFound(detail: String = "") -> Self { .init(.messageNotFound, detail: detail) }
    public static func messageAlreadyDeleted(detail: String = "") -> Self { .init(.messageAlreadyDeleted, detail: detail) }
    public static func onlySelfCanModifyAlias(detail: String = "") -> Self { .init(.onlySelfCanModifyAlias, detail: detail) }
    public static func onlyReceiverCanMarkMessage(detail: String = "") -> Self { .init(.onlyReceiverCanMarkMessage, detail: detail) }
    public static func deviceTimeout(detail: String = "") -> Self { .init(.deviceTimeout, detail: detail) }
    public static func shadowVersionConflict(detail: String = "") -> Self { .init(.shadowVersionConflict, detail: detail) }
    public static func downloadURLInvalid(detail: String = "") -> Self { .init(.downloadURLInvalid, detail: detail) }
    public static func upgradeNotAllowed(detail: String = "") -> Self { .init(.upgradeNotAllowed, detail: detail) }
    public static func upgradeInProgress(detail: String = "") -> Self { .init(.upgradeInProgress, detail: detail) }
    public static func homeNotFound(detail: String = "") -> Self { .init(.homeNotFound, detail: detail) }
    public static func homeRoleInsufficient(detail: String = "") -> Self { .init(.homeRoleInsufficient, detail: detail) }
    public static func deviceInAnotherHome(detail: String = "") -> Self { .init(.deviceInAnotherHome, detail: detail) }
    public static func roomNotFound(detail: String = "") -> Self { .init(.roomNotFound, detail: detail) }
    public static func alreadyHomeMember(detail: String = "") -> Self { .init(.alreadyHomeMember, detail: detail) }
    public static func homeOwnerCannotLeave(detail: String = "") -> Self { .init(.homeOwnerCannotLeave, detail: detail) }
    public static func onlyOwnerGetsLocalKey(detail: String = "") -> Self { .init(.onlyOwnerGetsLocalKey, detail: detail) }
    public static func noTuyaLocalKey(detail: String = "") -> Self { .init(.noTuyaLocalKey, detail: detail) }
    public static func pairingTokenUnknown(detail: String = "") -> Self { .init(.pairingTokenUnknown, detail: detail) }
    public static func pairingTokenExpired(detail: String = "") -> Self { .init(.pairingTokenExpired, detail: detail) }
    public static func pairingTokenUsed(detail: String = "") -> Self { .init(.pairingTokenUsed, detail: detail) }
    public static func pairingTokenForeign(detail: String = "") -> Self { .init(.pairingTokenForeign, detail: detail) }
    public static func notFound(detail: String = "") -> Self { .init(.notFound, detail: detail) }
    public static func requestThrottled(detail: String, retryAfter: Int64? = nil) -> Self {
        var error = Self(.requestThrottled, detail: detail)
        error.retryAfter = retryAfter
        return error
    }

    /// Every code this server answers, for `GET /errors`.
    static var catalogue: [CloudAPIError] { CloudError.catalogue.map { CloudAPIError($0) } }
}

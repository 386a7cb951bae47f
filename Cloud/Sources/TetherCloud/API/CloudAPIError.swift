public import Hummingbird
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
        if code == Self.requestThrottled(detail: "").code {
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

// The catalogue of the reference (gizwits-openapi.md §3): the codes this server answers.
extension CloudAPIError {
    public static func macAlreadyRegistered(detail: String = "") -> Self { .init(code: 9001, message: "mac already registered", detail: detail) }
    public static func appIDInvalid(detail: String = "") -> Self { .init(code: 9003, message: "appid invalid", detail: detail) }
    public static func tokenInvalid(detail: String = "") -> Self { .init(code: 9004, message: "token invalid", detail: detail) }
    public static func userNotExist(detail: String = "") -> Self { .init(code: 9005, message: "user not exist", detail: detail) }
    public static func tokenExpired(detail: String = "") -> Self { .init(code: 9006, message: "token expired", detail: detail) }
    public static func serverError(detail: String = "") -> Self { .init(code: 9008, status: .internalServerError, message: "server error", detail: detail) }
    public static func codeExpired(detail: String = "") -> Self { .init(code: 9009, message: "code expired", detail: detail) }
    public static func codeInvalid(detail: String = "") -> Self { .init(code: 9010, message: "code invalid", detail: detail) }
    public static func productKeyInvalid(detail: String = "") -> Self { .init(code: 9002, message: "product_key invalid", detail: detail) }
    public static func deviceNotFound(detail: String = "") -> Self { .init(code: 9014, status: .notFound, message: "device not found", detail: detail) }
    public static func formInvalid(detail: String = "") -> Self { .init(code: 9015, message: "form invalid", detail: detail) }
    public static func didPasscodeInvalid(detail: String = "") -> Self { .init(code: 9016, message: "did or passcode invalid", detail: detail) }
    public static func deviceNotBound(detail: String = "") -> Self { .init(code: 9017, status: .unauthorized, message: "device not bound", detail: detail) }
    public static func phoneUnavailable(detail: String = "") -> Self { .init(code: 9018, message: "phone unavailable", detail: detail) }
    public static func usernameUnavailable(detail: String = "") -> Self { .init(code: 9019, message: "username unavailable", detail: detail) }
    public static func usernamePasswordError(detail: String = "") -> Self { .init(code: 9020, message: "username or password error", detail: detail) }
    public static func emailUnavailable(detail: String = "") -> Self { .init(code: 9022, message: "email unavailable", detail: detail) }
    public static func deviceDisabled(detail: String = "") -> Self { .init(code: 9023, message: "device disabled", detail: detail) }
    public static func userInvalid(detail: String = "") -> Self { .init(code: 9026, message: "user invalid", detail: detail) }
    public static func attrInvalid(detail: String = "") -> Self { .init(code: 9025, message: "attr invalid", detail: detail) }
    public static func deviceOffline(detail: String = "") -> Self { .init(code: 9042, message: "device offline", detail: detail) }
    public static func sendSMSFailed(detail: String = "") -> Self { .init(code: 9037, message: "send sms failed", detail: detail) }
    public static func applicationAuthInvalid(detail: String = "") -> Self { .init(code: 9038, message: "X-Gizwits-Application-Auth invalid", detail: detail) }
    public static func requestThrottled(detail: String, retryAfter: Int64? = nil) -> Self {
        var error = Self(code: 9041, status: .tooManyRequests, message: "request throttled", detail: detail)
        error.retryAfter = retryAfter
        return error
    }
    public static func timestampInvalid(detail: String = "") -> Self { .init(code: 9043, message: "X-Gizwits-Timestamp invalid", detail: detail) }
    public static func signatureInvalid(detail: String = "") -> Self { .init(code: 9044, message: "X-Gizwits-Signature invalid", detail: detail) }
    public static func emailNotActivated(detail: String = "") -> Self { .init(code: 9077, message: "email not activated", detail: detail) }
    public static func onlyOwnerCanBind(detail: String = "") -> Self { .init(code: 9092, message: "only owner can bind", detail: detail) }
    public static func notFound(detail: String = "") -> Self { .init(code: 9999, status: .notFound, message: "not found", detail: detail) }

    /// Every code this server answers, for `GET /errors`.
    static let catalogue: [CloudAPIError] = [
        .macAlreadyRegistered(), .productKeyInvalid(), .appIDInvalid(), .tokenInvalid(), .userNotExist(), .tokenExpired(),
        .serverError(), .codeExpired(), .codeInvalid(), .deviceNotFound(), .formInvalid(),
        .didPasscodeInvalid(), .deviceNotBound(), .phoneUnavailable(), .usernameUnavailable(),
        .usernamePasswordError(), .emailUnavailable(), .deviceDisabled(), .attrInvalid(), .userInvalid(), .deviceOffline(), .sendSMSFailed(),
        .applicationAuthInvalid(), .requestThrottled(detail: ""), .timestampInvalid(),
        .signatureInvalid(), .emailNotActivated(), .onlyOwnerCanBind(),
    ]
}

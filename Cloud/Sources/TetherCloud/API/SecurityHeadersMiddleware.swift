import HTTPTypes
import Hummingbird

/// Headers every API answer carries, errors included: nothing is sniffed, framed, cached or
/// referred, and HTTPS is insisted on once the server is reached over it.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Adds `Strict-Transport-Security` (the public URL is https).
    var strictTransport = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.contentSecurityPolicy] = "default-src 'none'; frame-ancestors 'none'"
        response.headers[.referrerPolicy] = "no-referrer"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        if strictTransport { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        return response
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}

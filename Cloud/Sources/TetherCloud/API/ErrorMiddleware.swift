import Hummingbird
import TetherCloudProtocol
import Logging

/// Answers every failure in the reference's error format: API errors as they are, unknown
/// routes as 404, anything unexpected as 9008 with the cause logged (never sent).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as CloudAPIError {
            // A device that does not answer in time (504) is the device's doing, not the server's.
            if error.status == .gatewayTimeout {
                context.logger.info("request timed out at the device", metadata: ["error": "\(error)"])
            } else if error.status.code >= 500 {
                context.logger.error("request failed", metadata: ["error": "\(error)"])
            }
            throw error
        } catch let error as HTTPError {
            switch error.status {
            case .notFound:
                throw CloudAPIError.notFound(detail: "\(request.method) \(request.uri.path)")
            case .methodNotAllowed:
                throw CloudAPIError(.methodNotAllowed, detail: "\(request.method) \(request.uri.path)")
            default:
                throw CloudAPIError(code: CloudError.formInvalid.code, status: error.status, message: CloudError.formInvalid.message, detail: error.body ?? "")
            }
        } catch is CancellationError {
            throw CloudAPIError.serverError(detail: "the server is shutting down")
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            throw CloudAPIError.serverError()
        }
    }
}

import Hummingbird
import NIOCore
import Prometheus
import TetherCore

/// `GET /status`, `GET /errors` and the Prometheus endpoint `GET /metrics`.
struct SystemRoutes<Context: RequestContext> {
    static var version: String { "0.4.0" }

    let accounts: AccountService
    let metrics: CloudMetrics

    func register(on router: Router<Context>) {
        router.get("/status") { request, _ in
            _ = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            return Response.json(.object(["status": .object(["version": .string(Self.version)])]))
        }
        router.get("/errors") { request, _ in
            _ = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            let errors = CloudAPIError.catalogue.map { error -> JSONValue in
                .object([
                    "status": .int(Int64(error.status.code)),
                    "error_code": .int(Int64(error.code)),
                    "error_message": .string(error.message),
                ])
            }
            return Response.json(.array(errors))
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer()))
            )
        }
    }
}

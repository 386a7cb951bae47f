import Hummingbird
import NIOCore
import Prometheus
import TetherCore

/// `GET /status`, `GET /errors` and `GET /openapi.json`. (`/metrics` has its own listener:
/// ``MetricsListener``.)
struct SystemRoutes<Context: RequestContext> {
    static var version: String { TetherVersion.current }

    let accounts: AccountService
    let metrics: CloudMetrics
    let catalogue: OperationCatalogue

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/status", summary: "The server's version", tag: "system", security: .app,
                success: .ok(JSONSchema.object(["status": JSONSchema.object(["version": JSONSchema.string], required: ["version"])], required: ["status"]))
            )
        ) { request, _ in
            _ = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            return Response.json(.object(["status": .object(["version": .string(Self.version)])]))
        }
        router.on(
            .init(
                method: .get, path: "/errors", summary: "Every error code this server answers", tag: "system", security: .app,
                success: .ok(
                    JSONSchema.array(
                        JSONSchema.object(
                            ["status": JSONSchema.integer, "error_code": JSONSchema.integer, "error_message": JSONSchema.string],
                            required: ["status", "error_code", "error_message"])))
            )
        ) { request, _ in
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
        router.on(
            .init(
                method: .get, path: "/openapi.json", summary: "This document", tag: "system", security: .none,
                success: .ok(JSONSchema.empty)
            )
        ) { _, _ in
            Response.json(OpenAPIDocument.make(operations: catalogue.operations, version: Self.version))
        }
    }
}

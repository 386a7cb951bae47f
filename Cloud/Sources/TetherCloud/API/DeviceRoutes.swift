import Hummingbird
import NIOCore
import TetherCore

/// Device registration (`/dev/devices`) and users' bindings and devices (`/app/bindings`,
/// `/app/bind_mac`, `/app/devices/{did}`, `/app/datapoint`).
struct DeviceRoutes<Context: RequestContext> {
    let accounts: AccountService
    let registry: DeviceRegistry
    let bindings: BindingService

    func register(on router: Router<Context>) {
        router.post("/dev/devices") { request, _ in
            let form = try await RequestForm.decode(request)
            let did = try await registry.register(form: form)
            // GAgent posts a form and reads `did=…` from the answer; JSON clients get JSON.
            if request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
                return Response.json(.object(["did": .string(did)]), status: .created)
            }
            return Self.text("did=\(did)", status: .created)
        }
        router.get("/dev/devices/{did}") { _, context in
            Self.text(try await registry.brokerAddress(did: try context.pathParameter("did")))
        }
        router.post("/app/bindings") { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.bind(user, form: try await RequestForm.decode(request)), status: .created)
        }
        router.get("/app/bindings") { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.list(
                user,
                limit: try request.integerQuery("limit", default: 20, range: 1...1000),
                skip: try request.integerQuery("skip", default: 0, range: 0...1_000_000),
                showDisabled: try request.integerQuery("show_disabled", default: 0, range: 0...1) == 1
            ))
        }
        router.delete("/app/bindings") { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.unbind(user, form: try await RequestForm.decode(request)))
        }
        router.put("/app/bindings/{did}") { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            return Response.json(try await bindings.update(user, did: did, form: try await RequestForm.decode(request)))
        }
        router.post("/app/bind_mac") { request, _ in
            let user = try await accounts.authenticate(request)
            let form = try await RequestForm.decode(request)
            return Response.json(try await bindings.bindByMAC(
                user, form: form,
                timestamp: request.header(.gizwitsTimestamp),
                signature: request.header(.gizwitsSignature)
            ), status: .created)
        }
        router.get("/app/devices/{did}") { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.device(user, did: try context.pathParameter("did")))
        }
        router.get("/app/devdata/{did}/latest") { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.latestData(user, did: try context.pathParameter("did")))
        }
        router.get("/app/datapoint") { request, _ in
            _ = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            guard let productKey = request.query("product_key"), !productKey.isEmpty else {
                throw CloudAPIError.formInvalid(detail: "product_key is required")
            }
            guard let product = try await ProductRecord.find(productKey, in: bindings.database) else {
                throw CloudAPIError.productKeyInvalid()
            }
            return Response.json(try product.model.gizwitsJSON())
        }
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}

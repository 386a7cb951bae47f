import Hummingbird
import NIOCore
import TetherCore
import TetherCloudProtocol

/// Device registration (`/dev/devices`) and users' bindings and devices (`/app/bindings`,
/// `/app/bind_mac`, `/app/devices/{did}`, `/app/datapoint`).
struct DeviceRoutes<Context: RemoteAddressRequestContext> {
    let accounts: AccountService
    let registry: DeviceRegistry
    let bindings: BindingService
    let sources: ClientSourceResolver

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/dev/devices",
                summary:
                    "Device registration, signed with the product secret or the device's own (GAgent's unsigned form only for products opened to it); answered did=… (or JSON for JSON)",
                tag: "devices", security: .none,
                body: JSONSchema.object(
                    [
                        "mac": JSONSchema.string, "product_key": JSONSchema.string,
                        "passcode": JSONSchema.string("8 to 32 letters or digits; a random one when absent (signed registrations only)."),
                        "auth": ["type": "string", "enum": ["product", "device"], "description": "Whose secret signs: product (default) or device."],
                        "timestamp": JSONSchema.string("Unix seconds, within 5 minutes of the server's clock; newer than the device's last registration."),
                        "sign": JSONSchema.string(
                            "lower(hex(HMAC-SHA256(secret, \"auth\"+auth+\"mac\"+mac+\"passcode\"+passcode+\"product_key\"+product_key+\"timestamp\"+timestamp)))"
                        ),
                    ], required: ["mac", "product_key"]),
                acceptsForm: true,
                success: .created(
                    JSONSchema.object(
                        [
                            "did": JSONSchema.string, "passcode": JSONSchema.string,
                            "device_secret": JSONSchema.string("A product-signed registration of a device that never connected: its own secret."),
                        ], required: ["did"]))
            )
        ) { request, context in
            let form = try await RequestForm.decode(request)
            let registration = try DeviceRegistry.Request(form: form)
            let answer = try await registry.register(registration, source: sources.source(of: request, context: context))
            // GAgent posts a form and reads `did=…` from the answer; JSON clients get JSON.
            if request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
                var object: JSONObject = ["did": .string(answer.did)]
                if let passcode = answer.passcode { object["passcode"] = .string(passcode) }
                if let secret = answer.deviceSecret { object["device_secret"] = .string(secret) }
                return Response.json(.object(object), status: .created)
            }
            return Self.text(answer.formEncoded, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/dev/devices/{did}", summary: "Where the device's MQTT broker is: host=…&port=…",
                tag: "devices", security: .none, success: .text(200, "host=…&port=…")
            )
        ) { _, context in
            Self.text(try await registry.brokerAddress(did: try context.pathParameter("did")))
        }
        router.on(
            .init(
                method: .post, path: "/app/bindings", summary: "Bind devices by did and passcode", tag: "bindings", security: .appAndUser,
                body: JSONSchema.object(
                    [
                        "devices": JSONSchema.array(
                            JSONSchema.object(
                                [
                                    "did": JSONSchema.string, "passcode": JSONSchema.string, "remark": JSONSchema.string, "dev_alias": JSONSchema.string,
                                ], required: ["did", "passcode"]), maxItems: 100)
                    ], required: ["devices"]),
                success: .created(JSONSchema.ref("DidResults"))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.bind(user, try await RequestForm.decode(request, as: BindBody.init(json:))).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/bindings", summary: "The user's bound devices", tag: "bindings", security: .appAndUser,
                parameters: [
                    .query("limit", JSONSchema.integer(minimum: 1, maximum: 1000)),
                    .query("skip", JSONSchema.integer(minimum: 0, maximum: 1_000_000)),
                    .query("show_disabled", JSONSchema.integer(minimum: 0, maximum: 1)),
                    .query("show_proto_ver", JSONSchema.integer(minimum: 0, maximum: 1)),
                ],
                success: .ok(JSONSchema.object(["devices": JSONSchema.array(JSONSchema.ref("Device"))], required: ["devices"]))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(
                try await bindings.list(
                    user,
                    limit: try request.integerQuery("limit", default: 20, range: 1...1000),
                    skip: try request.integerQuery("skip", default: 0, range: 0...1_000_000),
                    showDisabled: try request.integerQuery("show_disabled", default: 0, range: 0...1) == 1
                ).json)
        }
        router.on(
            .init(
                method: .delete, path: "/app/bindings", summary: "Unbind devices", tag: "bindings", security: .appAndUser,
                body: JSONSchema.ref("DidList"), success: .ok(JSONSchema.ref("DidResults"))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.unbind(user, try await RequestForm.decode(request, as: DidListBody.init(json:))).json)
        }
        router.on(
            .init(
                method: .put, path: "/app/bindings/{did}", summary: "The user's remark, alias and labels of a bound device",
                tag: "bindings", security: .appAndUser,
                body: JSONSchema.object(["remark": JSONSchema.string, "dev_alias": JSONSchema.string, "dev_label": JSONSchema.array(JSONSchema.string)]),
                success: .ok(
                    JSONSchema.object(
                        ["remark": JSONSchema.string, "dev_alias": JSONSchema.string, "dev_label": JSONSchema.array(JSONSchema.string)],
                        required: ["remark", "dev_alias", "dev_label"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            return Response.json(try await bindings.update(user, did: did, try await RequestForm.decode(request, as: BindingUpdateBody.init(json:))).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/bind_mac", summary: "Bind by product key and MAC, signed with the product secret",
                tag: "bindings", security: .appAndUser,
                parameters: [
                    .header("X-Gizwits-Timestamp", JSONSchema.string, "Unix seconds, within 5 minutes of the server's clock."),
                    .header("X-Gizwits-Signature", JSONSchema.string, "lower(hex(md5(product_secret + timestamp)))"),
                ],
                body: JSONSchema.object(
                    [
                        "product_key": JSONSchema.string, "mac": JSONSchema.string, "remark": JSONSchema.string, "dev_alias": JSONSchema.string,
                        "set_owner": JSONSchema.integer(minimum: 0, maximum: 1),
                    ], required: ["product_key", "mac"]),
                success: .created(JSONSchema.ref("Device"))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: BindMACBody.init(json:))
            return Response.json(
                try await bindings.bindByMAC(
                    user, body,
                    timestamp: request.header(.gizwitsTimestamp),
                    signature: request.header(.gizwitsSignature)
                ).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}", summary: "One bound device", tag: "bindings", security: .appAndUser,
                success: .ok(JSONSchema.ref("Device"))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await bindings.device(user, did: try context.pathParameter("did")).json)
        }
        router.on(
            .init(
                method: .get, path: "/app/datapoint", summary: "A product's data-point model (Gizwits JSON)", tag: "devices", security: .app,
                parameters: [.query("product_key", JSONSchema.string, required: true)],
                success: .ok(
                    JSONSchema.object(
                        ["name": JSONSchema.string, "product_key": JSONSchema.string, "entities": JSONSchema.array(JSONSchema.empty)],
                        required: ["product_key", "entities"]))
            )
        ) { request, _ in
            _ = try await accounts.requireApp(request.header(.gizwitsApplicationID))
            return Response.json(try await bindings.productModel(request.query("product_key")).gizwitsJSON())
        }
    }

    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}

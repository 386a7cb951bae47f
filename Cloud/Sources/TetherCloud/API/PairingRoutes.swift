import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Pairing tokens (Tether extension): `POST /app/pairing_tokens` and
/// `GET /app/pairing_tokens/{id}`. Thin: every rule is in `PairingTokens`.
struct PairingRoutes<Context: RequestContext> {
    let accounts: AccountService
    let pairing: PairingTokens

    static var status: JSONValue {
        JSONSchema.object(
            [
                "id": JSONSchema.string, "state": JSONSchema.string("pending, bound, refused or expired"), "did": JSONSchema.string,
                "product_key": JSONSchema.string, "mac": JSONSchema.string, "role": JSONSchema.string, "home_id": JSONSchema.integer,
                "error_code": JSONSchema.integer, "message": JSONSchema.string, "expire_at": JSONSchema.integer,
            ], required: ["id", "state", "expire_at"])
    }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/pairing_tokens",
                summary:
                    "Tether: a pairing token (10 min, one use) for the app to give a new device with its Wi-Fi credentials; the device presents it on /sys/{pk}/{dn}/thing/pairing/activate and is bound to you (and placed in home_id); the outcome is pushed as s2c_pairing",
                tag: "devices", security: .appAndUser,
                body: JSONSchema.object(["product_key": JSONSchema.string, "home_id": JSONSchema.integer]),
                success: .created(
                    JSONSchema.object(
                        [
                            "id": JSONSchema.string, "token": JSONSchema.string, "expire_at": JSONSchema.integer, "product_key": JSONSchema.string,
                            "home_id": JSONSchema.integer,
                        ], required: ["id", "token", "expire_at"]))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: PairingTokenRequestBody.init(json:))
            return Response.json(try await pairing.issue(user, body).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/pairing_tokens/{id}",
                summary: "Tether: where one of your pairings stands (pending, bound, refused with its error_code, expired); 9513 for another user's",
                tag: "devices", security: .appAndUser, success: .ok(Self.status))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await pairing.status(user, id: try context.pathParameter("id")).json)
        }
        router.on(
            .init(
                method: .delete, path: "/app/pairing_tokens/{id}",
                summary:
                    "Tether: give up one of your pairings (the app's attempt failed): the token ends at once unless a device used it already; answers where it stands; 9513 for another user's",
                tag: "devices", security: .appAndUser, success: .ok(Self.status))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await pairing.cancel(user, id: try context.pathParameter("id")).json)
        }
    }
}

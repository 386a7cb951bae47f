import Hummingbird
import TetherCloudProtocol
import TetherCore

/// LAN grants for apps (Tether extension): `POST /app/devices/{did}/lan_grant`.
struct LANGrantRoutes<Context: RequestContext> {
    let accounts: AccountService
    let grants: LANGrants

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/devices/{did}/lan_grant",
                summary:
                    "Tether: a short-lived grant, signed by the cloud, that the device checks offline when the app logs in on the LAN (README, \"LAN grants\"); for users bound to the device (9017), not for disabled devices (9023)",
                tag: "devices", security: .appAndUser,
                success: .ok(
                    JSONSchema.object(
                        ["grant": JSONSchema.string, "key_id": JSONSchema.string, "expires_at": JSONSchema.integer],
                        required: ["grant", "key_id", "expires_at"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await grants.issue(for: user, did: try context.pathParameter("did")).json)
        }
    }
}

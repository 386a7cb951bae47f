import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Device shadows (Tether extension): `GET` and `PUT /app/devices/{did}/shadow`.
struct ShadowRoutes<Context: RequestContext> {
    let accounts: AccountService
    let shadows: ShadowService

    static var shadowSchema: JSONValue {
        let section = JSONSchema.empty
        return JSONSchema.object(
            [
                "did": JSONSchema.string, "version": JSONSchema.integer, "timestamp": JSONSchema.integer,
                "state": JSONSchema.object(["reported": section, "desired": section]),
                "metadata": JSONSchema.object(["reported": section, "desired": section]),
            ], required: ["did", "version", "timestamp", "state", "metadata"])
    }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}/shadow",
                summary: "Tether: the device's shadow (Alink): what it reported, what apps desire, when each changed, and its version",
                tag: "devices", security: .appAndUser, success: .ok(Self.shadowSchema)
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            return Response.json(try await shadows.shadow(user, did: did).json)
        }
        router.on(
            .init(
                method: .put, path: "/app/devices/{did}/shadow",
                summary:
                    "Tether: write what the device should be ({desired: {key: value|null} | \"null\", version}); version must exceed the shadow's (else 9501); pushed to the device",
                tag: "devices", security: .appAndUser,
                // desired: an object, or "null" to empty the section.
                body: JSONSchema.object(["desired": JSONValue.object([:]), "version": JSONSchema.integer], required: ["desired", "version"]),
                success: .ok(Self.shadowSchema)
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            let body = try await RequestForm.decode(request, as: ShadowDesiredBody.init(json:))
            return Response.json(try await shadows.updateDesired(user, did: did, body).json)
        }
    }
}

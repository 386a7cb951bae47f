import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Tuya local keys for device owners (Tether extension): `GET /app/devices/{did}/tuya_local_key`.
struct TuyaLocalKeyRoutes<Context: RequestContext> {
    let accounts: AccountService
    let keys: TuyaLocalKeys

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}/tuya_local_key",
                summary:
                    "Tether: the Tuya id, protocol version and local key of a device registered here, for controlling it on the LAN with the Tuya local protocol; for the device's owner only (9511: a local key cannot be revoked), 9017 when not bound, 9023 when disabled, 9512 when none is registered",
                tag: "devices", security: .appAndUser,
                success: .ok(
                    JSONSchema.object(
                        ["tuya_id": JSONSchema.string, "local_key": JSONSchema.string, "version": JSONSchema.string],
                        required: ["tuya_id", "local_key", "version"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await keys.key(for: user, did: try context.pathParameter("did")).json)
        }
    }
}

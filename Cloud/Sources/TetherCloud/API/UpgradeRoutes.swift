import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Firmware upgrades for apps (Tether extension): `GET /app/devices/{did}/firmware` and
/// `POST /app/devices/{did}/firmware/upgrade`.
struct UpgradeRoutes<Context: RequestContext> {
    let accounts: AccountService
    let upgrades: FirmwareUpgrades

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}/firmware",
                summary: "Tether: the firmware versions the device reports per module, its product's packages, and its upgrades (newest first)",
                tag: "devices", security: .appAndUser,
                success: .ok(
                    JSONSchema.object(
                        [
                            "did": JSONSchema.string,
                            "modules": JSONSchema.array(
                                JSONSchema.object(
                                    ["module": JSONSchema.string, "version": JSONSchema.string, "updated_at": JSONSchema.integer],
                                    required: ["module", "version", "updated_at"])),
                            "packages": JSONSchema.array(JSONSchema.ref("FirmwarePackage")),
                            "upgrades": JSONSchema.array(JSONSchema.ref("FirmwareUpgrade")),
                        ], required: ["did", "modules", "packages", "upgrades"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await upgrades.overview(user, did: try context.pathParameter("did")).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/devices/{did}/firmware/upgrade",
                summary:
                    "Tether: offer package {firmware_id} to the device, now or when it connects within ttl seconds (default 1 day); not for guests (9503), one per module at a time (9504); progress in the ledger and as s2c_upgrade frames",
                tag: "control", security: .appAndUser,
                body: JSONSchema.object(
                    ["firmware_id": JSONSchema.integer, "ttl": JSONSchema.integer(minimum: 60, maximum: 7 * 24 * 3600)], required: ["firmware_id"]),
                success: .ok(ControlRoutes<Context>.commandAnswer)
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: FirmwareUpgradeRequestBody.init(json:))
            let record = try await upgrades.start(user, did: try context.pathParameter("did"), body)
            return Response.json(CommandAcceptedBody(commandID: record.id, state: record.state.rawValue).json)
        }
    }
}

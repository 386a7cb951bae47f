import TetherCloudProtocol
import TetherCore

/// Device shadows for apps (Tether extension): a user bound to a device reads its shadow and
/// writes what it desires, by the same version rule as the device; the device's node then
/// pushes the shadow to the device (``DeviceShadowLink``), or the device reads it when it
/// next asks.
struct ShadowService: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus

    private var documents: ShadowDocuments { ShadowDocuments(database: database) }

    /// The shadow of a device the user is bound to.
    func shadow(_ user: AuthenticatedUser, did: String) async throws -> DeviceShadowBody {
        _ = try await DeviceAccess(database: database).readable(by: user, did: did)
        return DeviceShadowBody(did: did, shadow: try await documents.read(did: did))
    }

    /// Writes the desired section; any bound user may, as any bound user may control.
    func updateDesired(_ user: AuthenticatedUser, did: String, _ body: ShadowDesiredBody) async throws -> DeviceShadowBody {
        _ = try await DeviceAccess(database: database).controllable(by: user, did: did)
        let shadow: DeviceShadow
        do {
            shadow = try await documents.write(did: did, ShadowUpdate(desired: body.desired, version: body.version), by: .app)
        } catch let refusal as ShadowRefusal {
            switch refusal.code {
            case .versionConflict: throw CloudAPIError.shadowVersionConflict(detail: refusal.message)
            default: throw CloudAPIError.formInvalid(detail: refusal.message)
            }
        }
        await bus.publish(.shadowDesired(did: did))
        return DeviceShadowBody(did: did, shadow: shadow)
    }
}

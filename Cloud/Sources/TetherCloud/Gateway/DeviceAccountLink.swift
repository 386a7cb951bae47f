import Logging
import TetherAlink
import TetherCloudProtocol
import TetherCore

/// `/sys/{pk}/{dn}/account/bind` and `…/account/unbind` (the channel SDK's account binding):
/// a device presents an IoT token its user's app obtained (`POST /app/iot_token`) and is bound
/// to (or unbound from) that user. The token proves the user; the device's connection proves
/// the device. Answered on the topic's `_reply`: 200, 460 without an `iotToken`, 401 for a
/// token that is unknown, used, expired or whose session ended, 403 when the device cannot be
/// bound (disabled, or owned by someone else), 404 when unbinding a user who is not bound.
struct DeviceAccountLink: Sendable {
    let tokens: IoTTokens
    let bindings: BindingService
    let logger: Logger

    static let bindPath = "account/bind"
    static let unbindPath = "account/unbind"

    func handle(_ request: AlinkRequest, path: String, did: String) async -> AlinkReply {
        guard case .string(let token)? = request.params["iotToken"], !token.isEmpty else {
            return request.reply(code: 460, message: "params.iotToken is required")
        }
        do {
            guard let user = try await tokens.redeem(token) else {
                return request.reply(code: 401, message: "the iotToken is unknown, used, expired or its session has ended")
            }
            if path == Self.unbindPath {
                let result = try await bindings.unbind(user, .init(dids: [did]))
                guard result.success.contains(did) else { return request.reply(code: 404, message: "the user is not bound to this device") }
                return request.reply()
            }
            let role = try await bindings.bindByDevice(user, did: did)
            return request.reply(code: 200, data: ["uid": .string(user.uid), "role": .string(role.rawValue)])
        } catch let error as CloudAPIError {
            return request.reply(code: 403, message: "the device cannot be bound: \(error.detail.isEmpty ? error.message : error.detail)")
        } catch {
            logger.error("account binding failed", metadata: ["did": "\(did)", "error": "\(error)"])
            return request.reply(code: 500, message: "the binding could not be stored")
        }
    }
}

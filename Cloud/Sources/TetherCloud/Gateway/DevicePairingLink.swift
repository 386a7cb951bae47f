import Logging
import TetherAlink
import TetherCloudProtocol
import TetherCore

/// `/sys/{pk}/{dn}/thing/pairing/activate` (Tether extension): a new device presents the pairing
/// token its user's app gave it; the cloud binds it to that user (``PairingTokens``). Answered on
/// the topic's `_reply`: 200 with the outcome, 460 without a token, or the refusal's cloud code
/// (9513 unknown, 9514 expired, 9515 used, 9516 another product, or the binding's own).
struct DevicePairingLink: Sendable {
    let tokens: PairingTokens
    let logger: Logger

    func handle(_ request: AlinkRequest, did: String) async -> AlinkReply {
        let activation: PairingActivation
        do throws(TetherError) {
            activation = try PairingActivation(params: request.params.objectValue ?? [:])
        } catch {
            return request.reply(code: 460, message: error.message)
        }
        do {
            return request.reply(code: 200, data: try await tokens.activate(token: activation.token, did: did).json)
        } catch let error as CloudAPIError {
            logger.info("pairing refused", metadata: ["did": "\(did)", "code": "\(error.code)"])
            return request.reply(code: error.code, message: error.detail.isEmpty ? error.message : error.detail)
        } catch {
            logger.error("pairing failed", metadata: ["did": "\(did)", "error": "\(error)"])
            return request.reply(code: 500, message: "the pairing could not be stored")
        }
    }
}

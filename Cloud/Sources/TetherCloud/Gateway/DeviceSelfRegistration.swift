import Logging
import TetherCore
import TetherMQTT

/// Dynamic registration (Alink §2.3): a device created beforehand that connected on
/// `/ext/register` with the product secret gets its own secret there; it then disconnects and
/// connects again with it. (`DeviceAuthenticator` admits only devices never activated.)
struct DeviceSelfRegistration: Sendable {
    let broker: MQTTBroker
    let database: any SQLDatabase
    let logger: Logger

    func answer(_ principal: MQTTPrincipal, did: String) async throws {
        guard let device = try await DeviceStore(database).credentials(did: did) else { return }
        let answer: JSONValue = [
            "productKey": .string(device.productKey), "deviceName": .string(device.deviceName), "deviceSecret": .string(device.deviceSecret),
        ]
        broker.send(MQTTMessage(topic: "/ext/register", payload: answer.serialized(), qos: .atLeastOnce), toClientID: principal.clientID)
        logger.info("device registered itself", metadata: ["did": "\(did)"])
    }
}

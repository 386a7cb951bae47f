import Logging
import TetherAlink
import TetherCore
import TetherMQTT

/// Dynamic registration (Alink §2.3): a device that connected with the product secret gets its
/// own secret on `/ext/register` (`authType=register`, created beforehand) or a token on
/// `/ext/regnwl` (`regnwl`, whitelist-free); it then disconnects and connects again with it.
/// (`DeviceAuthenticator` admits only devices never activated.)
struct DeviceSelfRegistration: Sendable {
    let broker: MQTTBroker
    let database: any SQLDatabase
    let logger: Logger

    func answer(_ registration: DevicePrincipal.Registration, did: String, clientID: String) async throws {
        let store = DeviceStore(database)
        guard let device = try await store.credentials(did: did) else { return }
        let topic: String
        let answer: JSONValue
        if registration.type == .regnwl {
            // A new token each time (a unit that lost its answer registers again); only its
            // hash is kept, and the answer goes to this connection alone.
            let token = Secrets.hex(bytes: 16)
            try await store.setToken(did: did, tokenHash: Secrets.sha256(token), at: Clock.unixNow())
            topic = "/ext/regnwl"
            answer = [
                "clientId": .string("\(device.deviceName).\(device.productKey)"), "productKey": .string(device.productKey),
                "deviceName": .string(device.deviceName), "deviceToken": .string(token),
            ]
        } else {
            topic = "/ext/register"
            answer = [
                "productKey": .string(device.productKey), "deviceName": .string(device.deviceName), "deviceSecret": .string(device.deviceSecret),
            ]
        }
        broker.send(MQTTMessage(topic: topic, payload: answer.serialized(), qos: .atLeastOnce), toClientID: clientID)
        logger.info("device registered itself", metadata: ["did": "\(did)", "alink.registration": "\(topic)"])
    }
}

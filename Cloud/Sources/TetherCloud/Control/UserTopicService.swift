import TetherAlink
import TetherCloudProtocol
import TetherCore

/// Apps publishing to devices' custom topics (Tether extension, Aliyun's `Pub`): a user bound
/// to the device (as for control), one of the device's own `/{pk}/{dn}/user/…` topics of a
/// class its product lets devices subscribe to, a device that is connected. The node holding
/// the device publishes it into its broker, where the device's own subscription decides.
struct UserTopicService: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let history: DeviceHistory

    func publish(_ user: AuthenticatedUser, did: String, _ body: DevicePublishBody) async throws {
        let device = try await DeviceAccess(database: database).controllable(by: user, did: did)
        guard case .user(let path)? = device.ownTopic(body.topic)?.topic else {
            throw CloudAPIError.formInvalid(detail: "topic must be one of the device's own custom topics, /\(device.productKey)/\(device.deviceName)/user/…")
        }
        guard let product = try await ProductStore(database).find(device.productKey), product.userTopics.allowsDelivery(path: Substring(path)) else {
            throw CloudAPIError.formInvalid(detail: "user/\(path) is not a topic class the product's devices subscribe to")
        }
        guard device.isOnline else { throw CloudAPIError.deviceOffline() }
        let hex = body.payload.tetherHex
        try await history.log(
            did: did, kind: .appToDevice, atMs: Clock.unixMilliseconds(), body: ["topic": .string(path)], payloadHex: hex, uid: user.uid, appID: user.appID,
            source: "user_topic")
        await bus.publish(.userPublish(did: did, topic: body.topic, payloadHex: hex, qos: body.qos))
    }
}

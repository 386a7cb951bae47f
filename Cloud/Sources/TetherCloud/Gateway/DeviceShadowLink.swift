import Logging
import NIOCore
import TetherAlink
import TetherCore
import TetherMQTT

/// The device's side of its shadow: requests on `/shadow/update/{pk}/{dn}` answered on
/// `/shadow/get/{pk}/{dn}`, and the shadow pushed there (`"method": "control"`) when an app
/// changed what it desires and this node holds the device's connection.
struct DeviceShadowLink: Sendable {
    let broker: MQTTBroker
    let connections: DeviceConnections
    let documents: ShadowDocuments
    let logger: Logger

    /// Answers one request of a device's.
    func handle(_ bytes: some Collection<UInt8>, did: String, device: AlinkDeviceIdentity, clientID: String) async {
        let reply: ShadowReply
        do {
            switch try ShadowRequest(parsing: bytes) {
            case .get:
                let shadow = try await documents.read(did: did)
                reply = shadow.isEmpty ? .refused(ShadowRefusal(.emptyShadow, "the shadow holds nothing")) : .document(shadow)
            case .update(let update), .delete(let update):
                reply = .accepted(version: try await documents.write(did: did, update, by: .device).version)
            }
        } catch let refusal as ShadowRefusal {
            reply = .refused(refusal)
        } catch {
            logger.error("a shadow request could not be handled", metadata: ["did": "\(did)", "error": "\(error)"])
            reply = .refused(ShadowRefusal(.serverError, "the shadow could not be stored"))
        }
        send(reply, to: device, clientID: clientID)
    }

    /// Pushes the shadow to its device if this node holds the device's connection.
    func pushDesired(did: String) async throws {
        guard let (record, clientID) = try await connections.route(did) else { return }
        let device = try AlinkDeviceIdentity(productKey: record.productKey, deviceName: record.deviceName)
        send(.control(try await documents.read(did: did)), to: device, clientID: clientID)
    }

    private func send(_ reply: ShadowReply, to device: AlinkDeviceIdentity, clientID: String) {
        let topic = AlinkDeviceTopic(device: device, topic: .shadowGet).name
        let payload = ByteBuffer(bytes: reply.bytes(atSeconds: Clock.unixNow()))
        broker.send(MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce), toClientID: clientID)
    }
}

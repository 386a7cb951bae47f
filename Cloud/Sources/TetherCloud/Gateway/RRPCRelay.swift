import Logging
import NIOCore
import Synchronization
import TetherAlink
import TetherCore
import TetherMQTT

/// The device side of RRPC on the node that holds the device's connection: sends the calls the
/// bus brings to the device (QoS 0, as the platform does) and puts the device's answers on the
/// bus. Only an answer to a call this node sent, from the device it was sent to and before the
/// caller gave up, goes on: a device cannot flood the bus with answers nobody asked for.
final class RRPCRelay: Sendable {
    let broker: MQTTBroker
    let connections: DeviceConnections
    let history: DeviceHistory
    let bus: any ClusterBus
    let logger: Logger
    /// Calls sent and not yet answered: message id → the device and when the caller stops waiting.
    private let outstanding = Mutex<[String: (did: String, deadlineMs: Int64)]>([:])

    init(broker: MQTTBroker, connections: DeviceConnections, history: DeviceHistory, bus: any ClusterBus, logger: Logger) {
        self.broker = broker
        self.connections = connections
        self.history = history
        self.bus = bus
        self.logger = logger
    }

    /// The calls sent and not yet answered.
    var outstandingMessageIDs: [String] { outstanding.withLock { Array($0.keys) } }

    /// Sends a call to its device if this node holds the device's connection.
    func send(_ request: RRPCRequestEvent) async throws {
        guard let (device, clientID) = try await connections.route(request.did) else { return }
        let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
        var destination = AlinkDeviceTopic(device: identity, topic: .rrpcRequest(request.messageID))
        if let custom = request.topic {
            // Custom RRPC: the device's own topic (checked by the caller's node), behind `/ext/rrpc/{id}`.
            guard let parsed = AlinkDeviceTopic(parsing: custom), parsed.device == identity else { return }
            destination = parsed
            destination.rrpcMessageID = request.messageID
        }
        let topic = destination.name
        let now = Clock.unixMilliseconds()
        outstanding.withLock { calls in
            calls = calls.filter { $0.value.deadlineMs > now }
            calls[request.messageID] = (request.did, request.deadlineMs)
        }
        let payload = ByteBuffer(bytes: [UInt8](tetherHex: request.payloadHex) ?? [])
        guard broker.send(MQTTMessage(topic: topic, payload: payload, qos: .atMostOnce), toClientID: clientID) else {
            _ = outstanding.withLock { $0.removeValue(forKey: request.messageID) }
            await bus.publish(.rrpcAnswer(messageID: request.messageID, did: request.did, payloadHex: nil))
            return
        }
    }

    /// A device published on an RRPC response topic (`/sys/…/rrpc/response/{id}`, or the
    /// `/ext/rrpc/{id}/…` topic of a custom call).
    func answered(messageID: String, did: String, payload: [UInt8]) async throws {
        let now = Clock.unixMilliseconds()
        let expected = outstanding.withLock { calls -> Bool in
            guard let call = calls[messageID], call.did == did, call.deadlineMs > now else { return false }
            calls[messageID] = nil
            return true
        }
        guard expected else {
            logger.debug("an RRPC answer nobody waits for", metadata: ["did": "\(did)", "rrpc": "\(messageID)"])
            return
        }
        let hex = payload.tetherHex
        // The caller waits: the answer goes before the log row.
        await bus.publish(.rrpcAnswer(messageID: messageID, did: did, payloadHex: hex))
        try await history.log(did: did, kind: .deviceToApp, atMs: now, body: ["rrpc": .string(messageID)], payloadHex: hex, source: "rrpc")
    }
}

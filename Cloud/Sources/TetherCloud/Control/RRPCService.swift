import Logging
import ServiceLifecycle
import Synchronization
import TetherAlink
import TetherCloudProtocol
import TetherCore

/// Synchronous calls from apps to devices (Alink RRPC, `shared/reference/alink-mqtt.md` §5):
/// checked against the binding, handed over the bus to whichever node holds the device, and
/// answered with the device's bytes or a timeout. The calls waiting on this node are matched
/// with the answers the bus brings; ``run()`` reads them.
final class RRPCService: Service, Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let history: DeviceHistory
    let logger: Logger
    private let waiting = Mutex<[String: Call]>([:])

    private struct Call {
        var did: String
        var outcome: AsyncPromise<Outcome, Never>
    }

    private enum Outcome {
        case answered([UInt8])
        /// The device's node could not send the request (the device left meanwhile).
        case notSent
        case timedOut
    }

    init(database: any SQLDatabase, bus: any ClusterBus, history: DeviceHistory, logger: Logger) {
        self.database = database
        self.bus = bus
        self.history = history
        self.logger = logger
    }

    /// What an app sends a device.
    struct Request: Sendable {
        var payload: [UInt8]
        /// A topic of the device's own for custom RRPC; nil for system RRPC.
        var topic: String?
        var timeoutMs: Int64
    }

    /// Sends `request` to the device and waits for its answer. Only a user bound to the device
    /// calls it (as for a control), only while it is connected.
    func call(_ user: AuthenticatedUser, did: String, _ request: Request) async throws -> RRPCAnswerBody {
        guard RRPCCallBody.timeoutRangeMs.contains(request.timeoutMs) else {
            throw CloudAPIError.formInvalid(detail: "timeout_ms is \(RRPCCallBody.timeoutRangeMs.lowerBound) to \(RRPCCallBody.timeoutRangeMs.upperBound)")
        }
        guard request.payload.count <= RRPCCallBody.maximumPayload else {
            throw CloudAPIError.formInvalid(detail: "the payload is at most \(RRPCCallBody.maximumPayload) bytes")
        }
        let device = try await DeviceAccess(database: database).controllable(by: user, did: did)
        if let topic = request.topic { try Self.checkCustomTopic(topic, of: device) }
        guard device.isOnline else { throw CloudAPIError.deviceOffline() }

        let messageID = Self.newMessageID()
        let outcome = AsyncPromise<Outcome, Never>()
        waiting.withLock { $0[messageID] = Call(did: did, outcome: outcome) }
        defer { _ = waiting.withLock { $0.removeValue(forKey: messageID) } }
        let now = Clock.unixMilliseconds()
        let hex = request.payload.tetherHex
        var logged: JSONObject = ["rrpc": .string(messageID)]
        if let topic = request.topic { logged["topic"] = .string(topic) }
        try await history.log(
            did: did, kind: .appToDevice, atMs: now, body: .object(logged), payloadHex: hex, uid: user.uid, appID: user.appID, source: "rrpc")
        await bus.publish(
            .rrpcRequest(RRPCRequestEvent(messageID: messageID, did: did, topic: request.topic, payloadHex: hex, deadlineMs: now + request.timeoutMs)))
        switch await outcome.result(within: .milliseconds(request.timeoutMs), otherwise: { .success(.timedOut) }) {
        case .success(.answered(let payload)):
            return RRPCAnswerBody(messageID: messageID, payload: payload)
        case .success(.notSent):
            throw CloudAPIError.deviceOffline(detail: "\(did) disconnected before RRPC \(messageID) could be sent")
        case .success(.timedOut):
            throw CloudAPIError.deviceTimeout(detail: "no answer from \(did) to RRPC \(messageID) within \(request.timeoutMs) ms")
        }
    }

    /// Reads the answers the bus brings for the calls waiting here.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await event in self.bus.events() {
                guard case .rrpcAnswer(let messageID, let did, let payloadHex) = event else { continue }
                self.answered(messageID: messageID, did: did, payloadHex: payloadHex)
            }
        }
    }

    /// An answer for a call of this node, from the device it was sent to; nil: the device's
    /// node could not send it.
    func answered(messageID: String, did: String, payloadHex: String?) {
        guard let call = waiting.withLock({ $0[messageID] }), call.did == did else { return }
        guard let payloadHex else {
            call.outcome.resolve(.success(.notSent))
            return
        }
        // The device's node wrote the hex; anything else is a bug there, not the device's answer.
        guard let payload = [UInt8](tetherHex: payloadHex) else {
            logger.error("an RRPC answer on the bus is not hex", metadata: ["did": "\(did)", "rrpc": "\(messageID)"])
            return
        }
        call.outcome.resolve(.success(.answered(payload)))
    }

    /// Custom RRPC goes to one of the device's own topics, never a wildcard.
    static func checkCustomTopic(_ topic: String, of device: DeviceRecord) throws {
        guard let parsed = device.ownTopic(topic) else {
            throw CloudAPIError.formInvalid(detail: "topic must be one of the device's own topics (/{pk}/{dn}/user/… or /sys/{pk}/{dn}/thing/service/…)")
        }
        switch parsed.topic {
        case .user, .service: return
        default: throw CloudAPIError.formInvalid(detail: "topic must be a user topic or a service of the device")
        }
    }

    /// Decimal, like Aliyun's message ids, and unguessable: a device cannot answer a call it
    /// was not sent.
    static func newMessageID() -> String {
        String(UInt64.random(in: 1_000_000_000_000_000_000...9_999_999_999_999_999_999))
    }
}

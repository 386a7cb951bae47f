import HTTPTypes
import NIOCore
import Synchronization
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// `POST /app/devices/{did}/rrpc` against Alink devices on the gateway: system RRPC, custom
/// RRPC on a user topic, timeouts, and who may call.
@Suite("RRPC: synchronous calls from apps to devices", .timeLimit(.minutes(2)))
struct RRPCTests {
    static func call(_ cloud: CloudHarness, _ did: String, token: String, _ body: RRPCCallBody) async throws -> APIResponse {
        try await cloud.call(.post, "/app/devices/\(did)/rrpc", token: token, json: body.json)
    }

    /// Answers every RRPC request `device` gets with `answer(payload)`, until cancelled.
    static func answering(_ client: AlinkDeviceClient, _ answer: @escaping @Sendable ([UInt8]) -> [UInt8]) -> Task<Void, Never> {
        let downlinks = client.downlinks()
        return Task {
            for await downlink in downlinks {
                let isRRPC: Bool
                switch downlink.topic.topic {
                case .rrpcRequest: isRRPC = true
                default: isRRPC = downlink.topic.rrpcMessageID != nil
                }
                guard isRRPC else { continue }
                try? await client.reply(payload: ByteBuffer(bytes: answer(Array(downlink.payload.readableBytesView))), to: downlink)
            }
        }
    }

    @Test("system RRPC: the device's bytes come back to the caller, and both are in the device's log", arguments: TestEngine.allCases)
    func system(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let responder = Self.answering(client) { Array("pong:".utf8) + $0 }
                defer { responder.cancel() }
                let answer = try await Self.call(cloud, device.did, token: user.token, RRPCCallBody(payload: Array("ping".utf8), timeoutMs: 3_000))
                #expect(answer.status == .ok, "\(answer.text)")
                let body = try RRPCAnswerBody(json: try #require(answer.json))
                #expect(body.payload == Array("pong:ping".utf8))
                #expect(body.messageID.count == 19 && body.messageID.allSatisfy(\.isNumber))

                // Each call gets its own message id; an empty payload is a call too.
                let second = try RRPCAnswerBody(json: try #require(try await Self.call(cloud, device.did, token: user.token, RRPCCallBody(payload: [])).json))
                #expect(second.payload == Array("pong:".utf8))
                #expect(second.messageID != body.messageID)

                let payloads = try await GatewayFixtures.loggedPayloads(cloud, device.did, token: user.token)
                #expect(payloads.contains(Array("ping".utf8).tetherHex) && payloads.contains(Array("pong:ping".utf8).tetherHex), "\(payloads)")
            }
        }
    }

    @Test("custom RRPC on the device's user topic: sent on /ext/rrpc/{id}{topic}, answered on the same topic, never echoed back")
    func custom() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let topic = "/\(device.productKey)/\(device.deviceName)/user/get"
                let requests = Mutex<[String]>([])
                let downlinks = client.downlinks()
                let responder = Task {
                    for await downlink in downlinks where downlink.topic.rrpcMessageID != nil {
                        requests.withLock { $0.append(downlink.topic.name) }
                        try? await client.reply(payload: ByteBuffer(string: "state:on"), to: downlink)
                    }
                }
                defer { responder.cancel() }
                _ = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/ext/rrpc/+" + topic, qos: .atMostOnce)])
                let answer = try await Self.call(cloud, device.did, token: user.token, RRPCCallBody(payload: Array("get".utf8), topic: topic))
                #expect(answer.status == .ok, "\(answer.text)")
                let body = try RRPCAnswerBody(json: try #require(answer.json))
                #expect(String(decoding: body.payload, as: UTF8.self) == "state:on")
                // The device's answer is on its own subscription's topic: delivered back, it
                // would be a second request (and an endless exchange with a device that answers).
                try await Task.sleep(for: .milliseconds(300))
                #expect(requests.withLock { $0 } == ["/ext/rrpc/\(body.messageID)\(topic)"])

                // Only the device's own user topics and services; no wildcards, no other device.
                for bad in ["/\(device.productKey)/other/user/get", "/\(device.productKey)/\(device.deviceName)/user/+", "/sys/\(device.productKey)/\(device.deviceName)/thing/event/property/post", "user/get"] {
                    let refused = try await Self.call(cloud, device.did, token: user.token, RRPCCallBody(payload: [], topic: bad))
                    #expect(refused.errorCode == 9015, "\(bad): \(refused.text)")
                }
            }
        }
    }

    @Test("no answer is 9500 after the timeout; an offline device is 9042 at once; bad bodies are 9015")
    func failures() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let offline = try await Self.call(cloud, device.did, token: user.token, RRPCCallBody(payload: [1]))
            #expect(offline.errorCode == 9042, "\(offline.text)")
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlinks = client.downlinks()
                let silent = try await Self.call(cloud, device.did, token: user.token, RRPCCallBody(payload: [1], timeoutMs: 300))
                #expect(silent.errorCode == 9500, "\(silent.text)")
                #expect(silent.status == .gatewayTimeout)
                // The device got it, and an answer after the caller gave up goes nowhere.
                let late = try await GatewayFixtures.nextDownlink(downlinks)
                guard case .rrpcRequest = late.topic.topic else {
                    Issue.record("not an RRPC request: \(late.topic)")
                    return
                }
                try await client.reply(payload: ByteBuffer(string: "late"), to: late)
                for json: JSONValue in [
                    ["payload_base64": "AQ", "timeout_ms": 1000], ["payload_base64": "AQ==", "timeout_ms": 50], ["payload_base64": "AQ==", "timeout_ms": 30_001],
                    ["timeout_ms": 1000],
                ] {
                    let refused = try await cloud.call(.post, "/app/devices/\(device.did)/rrpc", token: user.token, json: json)
                    #expect(refused.errorCode == 9015, "\(json.serialized()): \(refused.text)")
                }
                let tooLarge = RRPCCallBody(payload: [UInt8](repeating: 7, count: RRPCCallBody.maximumPayload + 1))
                #expect(try await Self.call(cloud, device.did, token: user.token, tooLarge).errorCode == 9015)
            }
        }
    }

    @Test("a stranger gets 9017, a guest may call, a logged-out user gets 9004; another device cannot answer", arguments: TestEngine.allCases)
    func rights(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (product, device, owner) = try await GatewayFixtures.boundLamp(cloud)
            let other = try await GatewayFixtures.device(cloud, product: product)
            let (stranger, guest, leaving) = try await GatewayFixtures.outsiders(cloud, of: device)

            try await GatewayFixtures.withDevice(cloud, device) { client in
                let responder = Self.answering(client) { _ in Array("ok".utf8) }
                defer { responder.cancel() }
                #expect(try await Self.call(cloud, device.did, token: stranger.token, RRPCCallBody(payload: [1])).errorCode == 9017)
                #expect(try await Self.call(cloud, device.did, token: leaving.token, RRPCCallBody(payload: [1])).errorCode == 9004)
                let byGuest = try await Self.call(cloud, device.did, token: guest.token, RRPCCallBody(payload: [1]))
                #expect(try RRPCAnswerBody(json: try #require(byGuest.json)).payload == Array("ok".utf8), "\(byGuest.text)")
                #expect(try await Self.call(cloud, device.did, token: owner.token, RRPCCallBody(payload: [1])).status == .ok)
            }

            // The other device sees the call's topic only if it guesses the id, and even then its
            // publication on the first device's response topic is refused by the gateway's ACL,
            // and one on its own topic is not the first device's answer.
            try await GatewayFixtures.withDevice(cloud, device) { _ in
                try await GatewayFixtures.withDevice(cloud, other) { impostor in
                    let pending = Task { try await Self.call(cloud, device.did, token: owner.token, RRPCCallBody(payload: [1], timeoutMs: 1_500)) }
                    try await GatewayFixtures.waitUntil("the call reached the device's node") { cloud.node.gateway?.rrpc.outstandingMessageIDs.isEmpty == false }
                    let outstanding = try #require(cloud.node.gateway?.rrpc.outstandingMessageIDs.first)
                    let identity = try AlinkDeviceIdentity(productKey: other.productKey, deviceName: other.deviceName)
                    try await impostor.mqtt.publish(
                        MQTTMessage(
                            topic: AlinkDeviceTopic(device: identity, topic: .rrpcResponse(outstanding)).name, payload: ByteBuffer(string: "forged"),
                            qos: .atLeastOnce))
                    #expect(try await pending.value.errorCode == 9500)
                }
            }
        }
    }
}

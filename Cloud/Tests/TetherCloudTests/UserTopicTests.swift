import HTTPTypes
import NIOCore
import Synchronization
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// Custom topics (`/{pk}/{dn}/user/…`) with their product's classes: what a device may publish
/// and subscribe to, its publications routed to the apps subscribed to it, and apps publishing
/// to it through `POST /app/devices/{did}/publish`.
@Suite("Custom topics: classes, routing to apps, publishing to devices", .timeLimit(.minutes(2)))
struct UserTopicTests {
    static func publish(_ cloud: CloudHarness, _ did: String, token: String, _ body: DevicePublishBody) async throws -> APIResponse {
        try await cloud.call(.post, "/app/devices/\(did)/publish", token: token, json: body.json)
    }

    @Test("a device's publication on a pub class reaches the apps subscribed to it and its log; a sub class does not", arguments: TestEngine.allCases)
    func deviceToApp(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let base = "/\(device.productKey)/\(device.deviceName)/user"
            try await M2MTestClient.with(cloud, session: user) { app in
                try await app.send(.subscribe(dids: [device.did]))
                _ = try await app.subscribeResult()
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    _ = try await app.onlineStatus(online: true)
                    // Refused by its class (get is sub): dropped. Then the allowed one arrives first.
                    try await client.mqtt.publish(MQTTMessage(topic: base + "/get", payload: ByteBuffer(string: "not mine to send"), qos: .atLeastOnce))
                    try await client.mqtt.publish(MQTTMessage(topic: base + "/update", payload: ByteBuffer(bytes: [0, 1, 0xFF]), qos: .atLeastOnce))
                    let message = try await app.next("s2c_user_topic") { frame -> M2MUserTopic? in
                        if case .userTopic(let message) = frame { return message }
                        return nil
                    }
                    #expect(message.did == device.did && message.topic == base + "/update" && message.payload == [0, 1, 0xFF])
                    #expect(app.pending("s2c_user_topic").isEmpty)
                }
            }
            let payloads = try await GatewayFixtures.loggedPayloads(cloud, device.did, token: user.token)
            #expect(payloads.contains("0001ff") && !payloads.contains(Array("not mine to send".utf8).tetherHex), "\(payloads)")
        }
    }

    @Test("apps publish to a sub class the device subscribed to; other topics, offline devices and outsiders are refused", arguments: TestEngine.allCases)
    func appToDevice(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (product, device, owner) = try await GatewayFixtures.boundLamp(cloud)
            let other = try await GatewayFixtures.device(cloud, product: product)
            let (stranger, guest, leaving) = try await GatewayFixtures.outsiders(cloud, of: device)
            let base = "/\(device.productKey)/\(device.deviceName)/user"
            let hello = DevicePublishBody(topic: base + "/get", payload: Array("hello".utf8), qos: 1)
            #expect(try await Self.publish(cloud, device.did, token: owner.token, hello).errorCode == 9042)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let received = Mutex<[MQTTMessage]>([])
                let messages = client.mqtt.messages()
                let reader = Task {
                    for await message in messages where message.topic.contains("/user/") { received.withLock { $0.append(message) } }
                }
                defer { reader.cancel() }
                // Its class decides what it may subscribe to.
                #expect(try await client.mqtt.subscribe([MQTTTopicSubscription(filter: base + "/update", qos: .atLeastOnce)]).allSatisfy { $0.isFailure })
                #expect(try await client.mqtt.subscribe([MQTTTopicSubscription(filter: base + "/#", qos: .atLeastOnce)]).allSatisfy { !$0.isFailure })

                let sent = try await Self.publish(cloud, device.did, token: owner.token, hello)
                #expect(sent.status == .ok, "\(sent.text)")
                #expect(try await Self.publish(cloud, device.did, token: guest.token, DevicePublishBody(topic: base + "/get", payload: [2])).status == .ok)
                try await GatewayFixtures.waitUntil("the device has both messages") { received.withLock { $0.count } >= 2 }
                #expect(received.withLock { $0.map { Array($0.payload.readableBytesView) } } == [Array("hello".utf8), [2]])

                for topic in [base + "/update", base + "/+", "/\(other.productKey)/\(other.deviceName)/user/get", "/sys/\(device.productKey)/\(device.deviceName)/thing/service/property/set", "get"] {
                    let refused = try await Self.publish(cloud, device.did, token: owner.token, DevicePublishBody(topic: topic, payload: [1]))
                    #expect(refused.errorCode == 9015, "\(topic): \(refused.text)")
                }
                #expect(try await Self.publish(cloud, device.did, token: stranger.token, hello).errorCode == 9017)
                #expect(try await Self.publish(cloud, device.did, token: leaving.token, hello).errorCode == 9004)
                // The wildcard subscription did not bring the device a pub-class message: the broker checks each delivery.
                cloud.node.gateway!.broker.publish(MQTTMessage(topic: base + "/update", payload: ByteBuffer(string: "x"), qos: .atMostOnce))
                try await Task.sleep(for: .milliseconds(200))
                #expect(received.withLock { $0.count } == 2)
            }
        }
    }

    @Test("a product's own classes, set by the administrator, apply from the device's next connection")
    func customClasses() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let base = "/\(device.productKey)/\(device.deviceName)/user"
            let admin = Administration(database: cloud.database)
            try await admin.setUserTopics(productKey: device.productKey, try AlinkTopicClasses(encoded: "cmd/reset:pub/sub"))
            await #expect(throws: CloudAPIError.self) { try await admin.setUserTopics(productKey: "nope", .none) }
            try await GatewayFixtures.withDevice(cloud, device) { client async throws in
                #expect(try await client.mqtt.subscribe([MQTTTopicSubscription(filter: base + "/get", qos: .atLeastOnce)]).allSatisfy { $0.isFailure })
                #expect(try await client.mqtt.subscribe([MQTTTopicSubscription(filter: base + "/cmd/reset", qos: .atLeastOnce)]).allSatisfy { !$0.isFailure })
                #expect(try await Self.publish(cloud, device.did, token: user.token, DevicePublishBody(topic: base + "/get", payload: [1])).errorCode == 9015)
                #expect(try await Self.publish(cloud, device.did, token: user.token, DevicePublishBody(topic: base + "/cmd/reset", payload: [1])).status == .ok)
            }
        }
    }
}

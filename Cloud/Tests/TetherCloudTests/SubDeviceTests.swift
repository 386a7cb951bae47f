import HTTPTypes
import NIOCore
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// Gateways and sub-devices (Aliyun's topology and sub-device sessions): a hub adds its
/// children with their secrets, brings them online, reports for them and receives their
/// commands, and cannot speak for anything it did not prove.
@Suite("Gateways and sub-devices", .timeLimit(.minutes(2)))
struct SubDeviceTests {
    static func identity(_ device: Administration.CreatedDevice) throws -> AlinkDeviceIdentity {
        try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
    }

    static func isOnline(_ cloud: CloudHarness, _ did: String) async throws -> Bool {
        try await DeviceStore(cloud.database).find(did)?.isOnline == true
    }

    @Test("a gateway adds, logs in and speaks for its sub-devices; apps see and control them as devices", arguments: TestEngine.allCases)
    func speaksForItsChildren(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let hub = try await GatewayFixtures.device(cloud, product: product, name: "hub")
            let first = try await GatewayFixtures.device(cloud, product: product, name: "child-1")
            let second = try await GatewayFixtures.device(cloud, product: product, name: "child-2")
            let user = try await GatewayFixtures.user(cloud, boundTo: [first])
            let (one, two) = (try Self.identity(first), try Self.identity(second))
            try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                _ = try await app.subscribeResult()
                try await GatewayFixtures.withDevice(cloud, hub) { gateway in
                    #expect(try await gateway.addSubDevices([(one, first.deviceSecret), (two, second.deviceSecret)]) == [one, two])
                    #expect(Set(try await gateway.topology()) == [one, two])
                    #expect(try await gateway.loginSubDevices([(one, first.deviceSecret)]) == [one])
                    let online = try await app.onlineStatus(online: true)
                    #expect(online.did == first.did)

                    // Reports for the child are the child's.
                    let reply = try await gateway.postProperties(["Brightness": 42], for: one)
                    #expect(reply.isSuccess)
                    let report = try await app.notification { $0.attrs["Brightness"] != nil }
                    #expect(report.did == first.did && report.attrs["Brightness"] == 42)

                    // The app's write reaches the child through the gateway's connection.
                    let downlinks = gateway.downlinks()
                    let control = try await cloud.call(.post, "/app/control/\(first.did)", token: user.token, json: ["attrs": ["Brightness": 7]])
                    let accepted = try CommandAcceptedBody(json: try #require(control.json, "\(control.text)"))
                    let set = try await GatewayFixtures.nextDownlink(downlinks)
                    #expect(set.topic.device == one && set.topic.topic == .propertySet && set.request?.params["Brightness"] == 7)
                    try await gateway.reply(try #require(set.request).reply(), to: set)
                    _ = try await GatewayFixtures.waitForCommand(cloud, accepted.commandID, state: .acknowledged)

                    // Logout: offline. The other child was never online.
                    #expect(try await gateway.logoutSubDevices([one]) == [one])
                    #expect(try await app.onlineStatus(online: false).did == first.did)
                    let secondOnline = try await Self.isOnline(cloud, second.did)
                #expect(!secondOnline)
                    // Both online, then the gateway goes: so do they.
                    _ = try await gateway.loginSubDevices([(one, first.deviceSecret), (two, second.deviceSecret)])
                    try await GatewayFixtures.waitUntil("both children are online") {
                        let firstOnline = try await Self.isOnline(cloud, first.did)
                        let secondOnline = try await Self.isOnline(cloud, second.did)
                        return firstOnline && secondOnline
                    }
                }
                try await GatewayFixtures.waitUntil("the children went offline with their gateway") {
                    let firstOnline = try await Self.isOnline(cloud, first.did)
                    let secondOnline = try await Self.isOnline(cloud, second.did)
                    return !firstOnline && !secondOnline
                }
                #expect(try await TopologyStore(cloud.database).gateway(of: second.did) == hub.did)
            }
        }
    }

    @Test("no secret, no child: wrong signatures, stale timestamps, strangers' children and unproven topics are refused")
    func refusals() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let hub = try await GatewayFixtures.device(cloud, product: product, name: "hub")
            let other = try await GatewayFixtures.device(cloud, product: product, name: "other-hub")
            let child = try await GatewayFixtures.device(cloud, product: product, name: "child")
            let stranger = try await GatewayFixtures.device(cloud, product: product, name: "stranger")
            let (kid, alien) = (try Self.identity(child), try Self.identity(stranger))
            try await GatewayFixtures.withDevice(cloud, hub) { gateway in
                await #expect(throws: TetherError.self) { () async throws in try await gateway.addSubDevices([(kid, "wrong-secret")]) }
                await #expect(throws: TetherError.self) { () async throws in try await gateway.addSubDevices([(try Self.identity(hub), hub.deviceSecret)]) }
                await #expect(throws: TetherError.self) { () async throws in try await gateway.loginSubDevices([(alien, stranger.deviceSecret)]) }
                #expect(try await gateway.topology().isEmpty)
                // A stale signature: 20 minutes old.
                let old = SubDeviceSignIn.signed(kid, secret: child.deviceSecret, atMilliseconds: (Clock.unixNow() - 1200) * 1000)
                let raw = gateway.mqtt.messages()
                try await gateway.mqtt.publish(
                    MQTTMessage(
                        topic: "/sys/\(hub.productKey)/hub/thing/topo/add", payload: ByteBuffer(bytes: SubDeviceMessages.topoAdd(id: "77", [old]).bytes),
                        qos: .atLeastOnce))
                let answer = try await withThrowingTaskGroup(of: MQTTMessage?.self) { group in
                    group.addTask {
                        for try await message in raw where message.topic.hasSuffix("/thing/topo/add_reply") { return message }
                        return nil
                    }
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
                let reply = try AlinkReply(parsing: try #require(answer).payload.readableBytesView)
                #expect(reply.id == "77" && reply.code == 460 && reply.message.contains("timestamp"))

                // Until a child is logged in, its topics are not the gateway's.
                let before = try await gateway.mqtt.subscribe([MQTTTopicSubscription(filter: "/sys/\(child.productKey)/child/thing/service/+", qos: .atLeastOnce)])
                #expect(before.allSatisfy { $0.isFailure })
                let forged = AlinkRequest(id: "5", method: "thing.event.property.post", params: ["Brightness": 99])
                try await gateway.mqtt.publish(
                    MQTTMessage(topic: "/sys/\(child.productKey)/child/thing/event/property/post", payload: ByteBuffer(bytes: forged.bytes), qos: .atLeastOnce))
                _ = try await gateway.addSubDevices([(kid, child.deviceSecret)])
                _ = try await gateway.loginSubDevices([(kid, child.deviceSecret)])
                let after = try await gateway.mqtt.subscribe([MQTTTopicSubscription(filter: "/sys/\(child.productKey)/child/thing/service/+", qos: .atLeastOnce)])
                #expect(!after.contains { $0.isFailure })
                #expect(try await DeviceHistory(database: cloud.database).status(did: child.did) == nil, "the forged report before login was dropped")

                // Another gateway can neither log the child in nor out, nor remove it.
                try await GatewayFixtures.withDevice(cloud, other) { rival async throws in
                    await #expect(throws: TetherError.self) { () async throws in try await rival.loginSubDevices([(kid, child.deviceSecret)]) }
                    #expect(try await rival.logoutSubDevices([kid]).isEmpty)
                    #expect(try await rival.removeSubDevices([kid]).isEmpty)
                }
                #expect(try await Self.isOnline(cloud, child.did))
                // The gateway removes it: offline, and no longer in its topology.
                #expect(try await gateway.removeSubDevices([kid]) == [kid])
                #expect(try await gateway.topology().isEmpty)
                try await GatewayFixtures.waitUntil("the removed child is offline") { try await !Self.isOnline(cloud, child.did) }
            }
        }
    }
}

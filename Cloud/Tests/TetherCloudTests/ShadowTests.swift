import HTTPTypes
import NIOCore
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// Device shadows: Alink devices on `/shadow/update` and `/shadow/get`, apps through
/// `GET`/`PUT /app/devices/{did}/shadow`, with Aliyun's version rules on both sides.
@Suite("Device shadow through the gateway and the REST API", .timeLimit(.minutes(2)))
struct ShadowTests {
    static func read(_ cloud: CloudHarness, _ did: String, token: String) async throws -> APIResponse {
        try await cloud.call(.get, "/app/devices/\(did)/shadow", token: token)
    }

    static func write(_ cloud: CloudHarness, _ did: String, token: String, _ body: ShadowDesiredBody) async throws -> APIResponse {
        try await cloud.call(.put, "/app/devices/\(did)/shadow", token: token, json: body.json)
    }

    static func refusalCode(_ reply: ShadowReply) -> ShadowRefusal.Code? {
        if case .refused(let refusal) = reply { return refusal.code }
        return nil
    }

    @Test("a device reports, an app desires, the device is pushed the shadow and applies it", arguments: TestEngine.allCases)
    func roundTrip(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let empty = try DeviceShadowBody(json: try #require(try await Self.read(cloud, device.did, token: user.token).json))
            #expect(empty.did == device.did && empty.shadow == DeviceShadow())
            try await GatewayFixtures.withDevice(cloud, device) { client in
                #expect(Self.refusalCode(try await client.shadow(.get)) == .emptyShadow)
                let reported = try await client.shadow(.update(ShadowUpdate(reported: .merged(["color": "red", "size": 2]), version: 1)))
                #expect(reported == .accepted(version: 1))
                guard case .document(let document) = try await client.shadow(.get) else {
                    Issue.record("a get was not answered with the shadow")
                    return
                }
                #expect(document.reported == ["color": "red", "size": 2] && document.version == 1 && document.desired.isEmpty)

                // The app reads it and writes what it wants; the device is pushed the shadow.
                let downlinks = client.downlinks()
                let read = try DeviceShadowBody(json: try #require(try await Self.read(cloud, device.did, token: user.token).json))
                #expect(read.shadow.reported == ["color": "red", "size": 2] && read.shadow.version == 1)
                #expect(read.shadow.reportedTimestamps["color"].map { abs($0 - Clock.unixNow()) < 60 } == true)
                let written = try await Self.write(cloud, device.did, token: user.token, ShadowDesiredBody(desired: .merged(["color": "blue"]), version: 2))
                #expect(written.status == .ok, "\(written.text)")
                #expect(try DeviceShadowBody(json: try #require(written.json)).shadow.desired == ["color": "blue"])
                let pushed = try await GatewayFixtures.nextDownlink(downlinks)
                #expect(pushed.topic.topic == .shadowGet)
                guard case .control(let control) = try ShadowReply(parsing: pushed.payload.readableBytesView) else {
                    Issue.record("the push was not a control message")
                    return
                }
                #expect(control.desired == ["color": "blue"] && control.reported["color"] == "red" && control.version == 2)

                // A stale write loses on either side and changes nothing.
                let stale = try await Self.write(cloud, device.did, token: user.token, ShadowDesiredBody(desired: .merged(["color": "green"]), version: 2))
                #expect(stale.errorCode == 9501 && stale.status == .conflict, "\(stale.text)")
                #expect(Self.refusalCode(try await client.shadow(.update(ShadowUpdate(reported: .merged(["color": "blue"]), version: 2)))) == .versionConflict)

                // The device applies it: reports the value, empties desired, removes a key.
                let applied = try await client.shadow(
                    .update(ShadowUpdate(reported: .merged(["color": "blue", "size": "null"]), desired: .cleared, version: control.version + 1)))
                #expect(applied == .accepted(version: 3))
                let after = try DeviceShadowBody(json: try #require(try await Self.read(cloud, device.did, token: user.token).json)).shadow
                #expect(after.reported == ["color": "blue"] && after.desired.isEmpty && after.version == 3)

                // A delete, then a reset by the device.
                #expect(try await client.shadow(.delete(ShadowUpdate(reported: .merged(["color": .null]), version: 4))) == .accepted(version: 4))
                #expect(try await client.shadow(.update(ShadowUpdate(reported: .merged(["fresh": true]), version: -1))) == .accepted(version: 0))
                let reset = try DeviceShadowBody(json: try #require(try await Self.read(cloud, device.did, token: user.token).json)).shadow
                #expect(reset.reported == ["fresh": true] && reset.version == 0)
                // Malformed requests are answered with their code; the connection carries on. Both
                // requests go out raw and their replies are read raw: shadow replies carry no id, so
                // the client's own shadow() could take the refusal for its answer.
                let raw = client.mqtt.messages()
                let updateTopic = "/shadow/update/\(device.productKey)/\(device.deviceName)"
                @Sendable func nextReply() async throws -> ShadowReply {
                    let answer = try await withThrowingTaskGroup(of: MQTTMessage?.self) { group in
                        group.addTask {
                            for await message in raw where message.topic.hasPrefix("/shadow/get/") { return message }
                            return nil
                        }
                        group.addTask {
                            try await Task.sleep(for: .seconds(15))
                            return nil
                        }
                        defer { group.cancelAll() }
                        return try await group.next() ?? nil
                    }
                    return try ShadowReply(parsing: try #require(answer).payload.readableBytesView)
                }
                try await client.mqtt.publish(MQTTMessage(topic: updateTopic, payload: ByteBuffer(string: "{]"), qos: .atLeastOnce))
                #expect(Self.refusalCode(try await nextReply()) == .malformed)
                let valid = ShadowRequest.update(ShadowUpdate(reported: .merged(["a": 1]), version: 1))
                try await client.mqtt.publish(MQTTMessage(topic: updateTopic, payload: ByteBuffer(bytes: valid.bytes), qos: .atLeastOnce))
                #expect(try await nextReply() == .accepted(version: 1))
            }
        }
    }

    @Test("an offline device finds what was desired when it asks; bad bodies are 9015")
    func offlineAndBodies() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let written = try await Self.write(cloud, device.did, token: user.token, ShadowDesiredBody(desired: .merged(["mode": "eco"]), version: 1))
            #expect(written.status == .ok, "\(written.text)")
            try await GatewayFixtures.withDevice(cloud, device) { client in
                guard case .document(let shadow) = try await client.shadow(.get) else {
                    Issue.record("no shadow for the device")
                    return
                }
                #expect(shadow.desired == ["mode": "eco"] && shadow.version == 1)
            }
            let cleared = try await Self.write(cloud, device.did, token: user.token, ShadowDesiredBody(desired: .cleared, version: 2))
            #expect(try DeviceShadowBody(json: try #require(cleared.json)).shadow.desired.isEmpty)
            for json: JSONValue in [["version": 3], ["desired": [:], "version": 3], ["desired": 5, "version": 3], ["desired": ["a": 1]], ["desired": ["a": 1], "version": "x"]] {
                let refused = try await cloud.call(.put, "/app/devices/\(device.did)/shadow", token: user.token, json: json)
                #expect(refused.errorCode == 9015, "\(json.serialized()): \(refused.text)")
            }
            let big = JSONValue.string(String(repeating: "x", count: DeviceShadow.maximumDocumentSize))
            let tooBig = try await Self.write(cloud, device.did, token: user.token, ShadowDesiredBody(desired: .merged(["a": big]), version: 3))
            #expect(tooBig.errorCode == 9015, "\(tooBig.text)")
        }
    }

    @Test("writers racing with one version: exactly one wins, the others get 9501", arguments: TestEngine.allCases)
    func race(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let codes = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let answer = try await Self.write(cloud, device.did, token: user.token, ShadowDesiredBody(desired: .merged(["writer": .int(Int64(index))]), version: 1))
                        return answer.status == .ok ? 0 : answer.errorCode
                    }
                }
                var codes: [Int64?] = []
                for try await code in group { codes.append(code) }
                return codes
            }
            #expect(codes.filter { $0 == 0 }.count == 1 && codes.filter { $0 == 9501 }.count == 7, "\(codes)")
            let shadow = try DeviceShadowBody(json: try #require(try await Self.read(cloud, device.did, token: user.token).json)).shadow
            #expect(shadow.version == 1 && shadow.desired.count == 1)
        }
    }

    @Test("a stranger gets 9017, a guest may read and write, a logged-out user 9004, an unbound user 9017", arguments: TestEngine.allCases)
    func rights(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, owner) = try await GatewayFixtures.boundLamp(cloud)
            let (stranger, guest, leaving) = try await GatewayFixtures.outsiders(cloud, of: device)
            let unbound = try await GatewayFixtures.user(cloud, boundTo: [device])
            let unbinding = try await cloud.call(.delete, "/app/bindings", token: unbound.token, json: ["devices": [["did": .string(device.did)]]])
            #expect(unbinding.status == .ok, "\(unbinding.text)")

            let desire = ShadowDesiredBody(desired: .merged(["mode": "eco"]), version: 1)
            for (name, token, code): (String, String, Int64) in [("stranger", stranger.token, 9017), ("logged out", leaving.token, 9004), ("unbound", unbound.token, 9017)] {
                #expect(try await Self.read(cloud, device.did, token: token).errorCode == code, "\(name) read")
                #expect(try await Self.write(cloud, device.did, token: token, desire).errorCode == code, "\(name) write")
            }
            #expect(try await Self.write(cloud, device.did, token: guest.token, desire).status == .ok)
            let byOwner = try DeviceShadowBody(json: try #require(try await Self.read(cloud, device.did, token: owner.token).json))
            #expect(byOwner.shadow.desired == ["mode": "eco"])
        }
    }

    @Test("a device can neither write nor watch another device's shadow, nor push its own")
    func confinement() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let victim = try await GatewayFixtures.device(cloud, product: product, name: "victim")
            let intruder = try await GatewayFixtures.device(cloud, product: product, name: "intruder")
            let owner = try await GatewayFixtures.user(cloud, boundTo: [victim])
            try await GatewayFixtures.withDevice(cloud, intruder) { client in
                let watch = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/shadow/get/\(product.productKey)/victim", qos: .atLeastOnce)])
                #expect(watch.allSatisfy { $0.isFailure })
                let wildcard = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/shadow/#", qos: .atLeastOnce)])
                #expect(wildcard.allSatisfy { $0.isFailure })
                let own = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/shadow/get/\(product.productKey)/intruder", qos: .atLeastOnce)])
                #expect(!own.contains { $0.isFailure })
                let forged = ShadowRequest.update(ShadowUpdate(reported: .merged(["owned": true]), version: 99))
                try await client.mqtt.publish(
                    MQTTMessage(topic: "/shadow/update/\(product.productKey)/victim", payload: ByteBuffer(bytes: forged.bytes), qos: .atLeastOnce))
                // A device does not answer itself on the cloud's topic.
                try await client.mqtt.publish(
                    MQTTMessage(
                        topic: "/shadow/get/\(product.productKey)/intruder", payload: ByteBuffer(bytes: ShadowReply.accepted(version: 77).bytes(atSeconds: 0)),
                        qos: .atLeastOnce))
                // Its own shadow still works, so the connection was not harmed and the forgery was handled before it.
                #expect(try await client.shadow(.update(ShadowUpdate(reported: .merged(["mine": true]), version: 1))) == .accepted(version: 1))
            }
            let victimShadow = try DeviceShadowBody(json: try #require(try await Self.read(cloud, victim.did, token: owner.token).json))
            #expect(victimShadow.shadow == DeviceShadow())
        }
    }
}

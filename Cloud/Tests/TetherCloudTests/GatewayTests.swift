import Foundation
import HTTPTypes
import NIOCore
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// The device gateway with real MQTT connections on loopback: Tether's Alink device client
/// plays the devices, a WebSocket client plays the app.
@Suite("Device gateway: Alink devices, the app's real-time side, the command ledger", .timeLimit(.minutes(2)))
struct GatewayTests {
    @Test("a device posts properties: stored, answered, pushed to the app; latest and raw_data read them back", arguments: TestEngine.allCases)
    func propertyPost(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await M2MTestClient.with(cloud, session: user) { app in
                try await app.send(.subscribe(dids: [device.did]))
                let subscribed = try await app.subscribeResult()
                #expect(subscribed.success.count == 1)
                _ = try await app.onlineStatus(online: false)
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    #expect(try await app.onlineStatus(online: true).did == device.did)
                    let reply = try await client.postProperties(["LightSwitch": 1, "Brightness": 40, "WorkMode": 2])
                    #expect(reply.code == 200)
                    #expect(reply.message == "success")
                    let noti = try await app.notification()
                    #expect(noti.did == device.did)
                    #expect(noti.attrs == ["Brightness": 40, "LightSwitch": true, "WorkMode": "night"])
                }
                _ = try await app.onlineStatus(online: false)
            }
            let latest = try await cloud.call(.get, "/app/devdata/\(device.did)/latest", token: user.token)
            #expect(latest["attr"] == ["Brightness": 40, "LightSwitch": true, "WorkMode": "night"])
            #expect(latest["updated_at"] != 0)
            let now = Int64(Date().timeIntervalSince1970)
            let log = try await cloud.call(.get, "/app/devices/\(device.did)/raw_data?type=cmd&start_time=\(now - 60)&end_time=\(now)", token: user.token)
            #expect(log["meta"]?["total"] == 1)
            #expect(log["objects"]?.arrayValue?.first?["type"] == "dev2app")
            let online = try await cloud.call(.get, "/app/devices/\(device.did)/raw_data?type=online&start_time=\(now - 60)&end_time=\(now)&sort=asc", token: user.token)
            #expect(online["objects"]?.arrayValue?.map { $0["type"] } == ["dev_online", "dev_offline"])
            let badWindow = try await cloud.call(.get, "/app/devices/\(device.did)/raw_data?type=cmd&start_time=\(now)&end_time=\(now - 60)", token: user.token)
            #expect(badWindow.errorCode == 9015)
        }
    }

    @Test("a post with bad points: the good ones are kept, the bad ones named in a 460 reply")
    func partialRejection() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let reply = try await client.postProperties(["Brightness": 55, "ColorTemperature": 99_999, "Nope": 1])
                #expect(reply.code == 460)
                #expect(reply.data["ColorTemperature"] != nil)
                #expect(reply.data["Nope"] != nil)
                #expect(reply.data["Brightness"] == nil)
            }
            let status = try await DeviceHistory(database: cloud.database).status(did: device.did)
            #expect(status?.attrs == ["Brightness": 55])
        }
    }

    @Test("refused connections: wrong secret, unknown device, replayed timestamp, keep-alive out of range, securemode=2 without TLS")
    func refusals() async throws {
        var gateway = CloudHarness.testGateway
        gateway.keepAliveRange = 30...1200
        try await CloudHarness.run(.sqlite, gateway: gateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            func refusal(_ configuration: MQTTClientConfiguration) async -> MQTTReasonCode? {
                do {
                    try await MQTTClient.withClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { _ in }
                    return nil
                } catch let error as MQTTError {
                    return error.reasonCode
                } catch {
                    return nil
                }
            }
            func configuration(secret: String = device.deviceSecret, name: String = device.deviceName, timestamp: Int64 = AlinkClock.now(), keepAlive: UInt16 = 60, secureMode: Int = 3) throws -> MQTTClientConfiguration {
                let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: name)
                let credentials = AlinkCredentials.device(identity, secret: secret, timestamp: timestamp, secureMode: secureMode)
                return MQTTClientConfiguration(
                    host: "127.0.0.1", port: cloud.mqttPort!, clientID: credentials.clientID, keepAlive: keepAlive,
                    username: credentials.username, password: Array(credentials.password.utf8), reconnect: nil
                )
            }
            let valid = try configuration()
            #expect(await refusal(valid) == nil)
            let wrongSecret = try configuration(secret: "wrong")
            #expect(await refusal(wrongSecret) == .badUserNameOrPassword)
            let unknown = try configuration(name: "nobody")
            #expect(await refusal(unknown) == .badUserNameOrPassword)
            let replayed = try configuration(timestamp: AlinkClock.now() - 3600)
            #expect(await refusal(replayed) == .badUserNameOrPassword)
            // Numbers chosen to overflow a subtraction are refused, and the server lives on.
            for extreme in [Int64.min, Int64.max, -1] {
                let absurd = try configuration(timestamp: extreme)
                #expect(await refusal(absurd) == .badUserNameOrPassword)
            }
            let shortKeepAlive = try configuration(keepAlive: 10)
            #expect(await refusal(shortKeepAlive) != nil)
            let tlsOnPlain = try configuration(secureMode: 2)
            #expect(await refusal(tlsOnPlain) == .notAuthorized)
            var noUser = try configuration()
            noUser.username = "garbage"
            #expect(await refusal(noUser) == .badUserNameOrPassword)
            try await cloud.database.query("UPDATE devices SET is_disabled = 1 WHERE did = $1", .text(device.did))
            let disabled = try configuration()
            #expect(await refusal(disabled) == .notAuthorized)
        }
    }

    @Test("a device cannot publish or subscribe to another device's topics")
    func topicConfinement() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let victim = try await GatewayFixtures.device(cloud, product: product, name: "victim")
            let intruder = try await GatewayFixtures.device(cloud, product: product, name: "intruder")
            try await GatewayFixtures.withDevice(cloud, victim) { victimClient in
                let victimDownlinks = victimClient.downlinks()
                try await GatewayFixtures.withDevice(cloud, intruder) { client in
                    let codes = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/sys/\(product.productKey)/victim/#", qos: .atLeastOnce)])
                    #expect(codes.allSatisfy { $0.isFailure })
                    let everything = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "#", qos: .atLeastOnce)])
                    #expect(everything.allSatisfy { $0.isFailure })
                    let own = try await client.mqtt.subscribe([MQTTTopicSubscription(filter: "/sys/\(product.productKey)/intruder/thing/#", qos: .atLeastOnce)])
                    #expect(!own.contains { $0.isFailure })
                    // A forged post and a forged property set in the victim's name go nowhere.
                    let forged = AlinkRequest(id: "1", method: "thing.event.property.post", params: ["Brightness": 1])
                    try await client.mqtt.publish(MQTTMessage(topic: "/sys/\(product.productKey)/victim/thing/event/property/post", payload: ByteBuffer(bytes: forged.bytes), qos: .atLeastOnce))
                    let set = AlinkRequest(id: "2", method: "thing.service.property.set", params: ["LightSwitch": 1])
                    try await client.mqtt.publish(MQTTMessage(topic: "/sys/\(product.productKey)/victim/thing/service/property/set", payload: ByteBuffer(bytes: set.bytes), qos: .atLeastOnce))
                    // The intruder's own post still works, so the connection was not harmed.
                    #expect(try await client.postProperties(["Brightness": 2]).code == 200)
                }
                await #expect(throws: TestFailure.self) { _ = try await GatewayFixtures.nextDownlink(victimDownlinks, timeout: .milliseconds(300)) }
            }
            #expect(try await DeviceHistory(database: cloud.database).status(did: victim.did) == nil)
        }
    }

    @Test("malformed payloads are dropped; the device and the others carry on")
    func malformed() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            let other = try await GatewayFixtures.device(cloud, product: product)
            try await GatewayFixtures.withDevice(cloud, other) { otherClient in
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    let topic = "/sys/\(product.productKey)/\(device.deviceName)/thing/event/property/post"
                    for payload in [[UInt8](), Array("{not json".utf8), Array("[1,2]".utf8), [0xff, 0xfe, 0x00], Array(#"{"params":{}}"#.utf8), Array(#"{"id":"999","params":"x"}"#.utf8)] {
                        try await client.mqtt.publish(MQTTMessage(topic: topic, payload: ByteBuffer(bytes: payload), qos: .atLeastOnce))
                    }
                    #expect(try await client.postProperties(["Brightness": 3]).code == 200)
                    #expect(try await otherClient.postProperties(["Brightness": 4]).code == 200)
                }
            }
        }
    }

    @Test("a write to an offline device fails at once; queued, it is delivered when the device returns and the ledger follows it to applied")
    func offlineAndQueued() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let offline = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["Brightness": 70]])
            #expect(offline.errorCode == 9042)
            let invalid = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["PowerConsumption": 1], "queue_ttl": 60])
            #expect(invalid.errorCode == 9025, "read-only point: \(invalid.text)")
            let queued = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["Brightness": 70, "WorkMode": "reading"], "queue_ttl": 60])
            #expect(queued["state"] == "queued", "\(queued.text)")
            let id = try #require(queued["command_id"].flatMap { if case .int(let id) = $0 { id } else { nil } })
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlink = try await GatewayFixtures.nextDownlink(client.downlinks())
                #expect(downlink.topic.topic == .propertySet)
                #expect(downlink.request?.id == String(id))
                #expect(downlink.request?.params == ["Brightness": 70, "WorkMode": 1])
                _ = try await GatewayFixtures.waitForCommand(cloud, id, state: .sent)
                try await client.reply(downlink.request!.reply(), to: downlink)
                _ = try await GatewayFixtures.waitForCommand(cloud, id, state: .acknowledged)
                #expect(try await client.postProperties(["Brightness": 70, "WorkMode": 1]).code == 200)
                _ = try await GatewayFixtures.waitForCommand(cloud, id, state: .applied)
            }
            let entry = try await cloud.call(.get, "/app/commands/\(id)", token: user.token)
            #expect(entry["state"] == "applied")
            #expect(entry["attrs"] == ["Brightness": 70, "WorkMode": "reading"])
            let list = try await cloud.call(.get, "/app/devices/\(device.did)/commands", token: user.token)
            #expect(list["commands"]?.arrayValue?.count == 1)
            let stranger = try await cloud.register("stranger")
            #expect(try await cloud.call(.get, "/app/commands/\(id)", token: stranger.token).errorCode == 9999)
            #expect(try await cloud.call(.post, "/app/control/\(device.did)", token: stranger.token, json: ["attrs": ["Brightness": 1]]).errorCode == 9017)
        }
    }

    @Test("a write is logged as sent, with its sender; a device that reports the written values before it answers has it applied, and the late answer keeps it so", arguments: TestEngine.allCases)
    func reportBeforeAnswer(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlinks = client.downlinks()
                let written = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["Brightness": 61]])
                let id = try #require(written["command_id"].flatMap { if case .int(let id) = $0 { id } else { nil } }, "\(written.text)")
                let downlink = try await GatewayFixtures.nextDownlink(downlinks)
                #expect(downlink.request?.id == String(id))
                _ = try await GatewayFixtures.waitForCommand(cloud, id, state: .sent)
                #expect(try await client.postProperties(["Brightness": 61]).code == 200)
                _ = try await GatewayFixtures.waitForCommand(cloud, id, state: .applied)
                try await client.reply(downlink.request!.reply(), to: downlink)
                // The answer is processed after the write below is sent: both in arrival order.
                let next = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["Brightness": 62]])
                let nextID = try #require(next["command_id"].flatMap { if case .int(let id) = $0 { id } else { nil } })
                _ = try await GatewayFixtures.waitForCommand(cloud, nextID, state: .sent)
                #expect(try await cloud.call(.get, "/app/commands/\(id)", token: user.token)["state"] == "applied")
            }
            let now = Clock.unixNow()
            let log = try await cloud.call(
                .get, "/app/devices/\(device.did)/raw_data?type=cmd&start_time=\(now - 60)&end_time=\(now + 1)&sort=asc&limit=100", token: user.token)
            // A row per sending: a write accepted while the device's connection is being taken
            // in may go twice (its delivery and the connection's resumption; writing the same
            // values again does no harm), so rows are counted per write.
            let sent = log["objects"]?.arrayValue?.filter { $0["type"] == "app2dev" } ?? []
            #expect(Set(sent.compactMap { $0["body"]?["attrs"]?["Brightness"] }) == [61, 62], "\(log.text)")
            #expect(sent.allSatisfy { $0["uid"] == .string(user.uid) && $0["source"] == "client" }, "\(log.text)")
        }
    }

    @Test("a queued command whose time-to-live passes expires; an unanswered one expires after the answer timeout")
    func expiry() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let queued = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["Brightness": 1], "queue_ttl": 1])
            let queuedID = try #require(queued["command_id"].flatMap { if case .int(let id) = $0 { id } else { nil } })
            _ = try await GatewayFixtures.waitForCommand(cloud, queuedID, state: .expired, timeout: .seconds(5))
            try await GatewayFixtures.withDevice(cloud, device) { client in
                // The expired command is not delivered when the device comes back. (A stream
                // whose consumer was cancelled is finished: the next wait gets a new one.)
                await #expect(throws: TestFailure.self) { _ = try await GatewayFixtures.nextDownlink(client.downlinks(), timeout: .milliseconds(500)) }
                let downlinks = client.downlinks()
                let sent = try await cloud.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["Brightness": 2]])
                let id = try #require(sent["command_id"].flatMap { if case .int(let id) = $0 { id } else { nil } })
                _ = try await GatewayFixtures.nextDownlink(downlinks)
                // Never answered: expired after the answer timeout (3 s in tests).
                let expired = try await GatewayFixtures.waitForCommand(cloud, id, state: .expired, timeout: .seconds(8))
                #expect(expired.message.contains("did not answer"))
            }
        }
    }

    @Test("c2s_write with req_sn: s2c_ack and s2c_noti carry it back as res_sn; a rejected write says so with res_sn")
    func webSocketWrite() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlinks = client.downlinks()
                try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                    _ = try await app.subscribeResult()
                    try await app.send(.write(M2MWrite(sequence: .number(12), did: device.did, attrs: ["LightSwitch": true, "Brightness": 10])))
                    let set = try await GatewayFixtures.nextDownlink(downlinks)
                    #expect(set.request?.params == ["Brightness": 10, "LightSwitch": 1])
                    try await client.reply(set.request!.reply(), to: set)
                    let ack = try await app.writeAcknowledgement()
                    #expect(ack.sequence == .number(12))
                    #expect(ack.did == device.did)
                    _ = try await client.postProperties(["LightSwitch": 1, "Brightness": 10])
                    let answered = try await app.notification(.answering(12))
                    #expect(answered.attrs == ["Brightness": 10, "LightSwitch": true])

                    try await app.send(.write(M2MWrite(sequence: .number(13), did: device.did, attrs: ["Brightness": 20])))
                    let second = try await GatewayFixtures.nextDownlink(downlinks)
                    try await client.reply(second.request!.reply(code: 6813, message: "busy"), to: second)
                    let refused = try await app.invalid(answering: 13)
                    #expect(refused.errorCode == 6813)
                    let id = try #require(refused.commandID)
                    let record = try await GatewayFixtures.waitForCommand(cloud, id, state: .rejected)
                    #expect(record.code == 6813)

                    try await app.send(.read(M2MRead(sequence: .number(14), did: device.did, names: ["Brightness"])))
                    let read = try await app.notification(.answering(14))
                    #expect(read.attrs == ["Brightness": 10])

                    try await app.send(.write(M2MWrite(sequence: .number(15), did: device.did, attrs: ["Brightness": 1000])))
                    let outOfRange = try await app.invalid(answering: 15)
                    #expect(outOfRange.errorCode == 9025)
                    try await app.send(.ping)
                    try await app.pong()
                }
            }
        }
    }

    @Test("the M2M API refuses what it must: before login, unbound devices, malformed frames")
    func webSocketRefusals() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            let stranger = try await cloud.register("stranger")
            try await M2MTestClient.with(cloud, session: stranger) { app in
                try await app.send(.subscribe(dids: [device.did]))
                let answer = try await app.subscribeResult()
                #expect(answer.failed.first?.errorCode == 9017)
                try await app.send(.write(M2MWrite(did: device.did, attrs: ["Brightness": 1])))
                #expect(try await app.invalid().errorCode == 9017)
                try await app.send(text: #""not an object""#)
                #expect(try await app.invalid().errorCode == 9015)
                try await app.send(text: #"{"cmd": "no_such_cmd"}"#)
                #expect(try await app.invalid().errorCode == 9015)
                // A frame the cloud sends, sent to it, and a write whose data is not data points.
                try await app.send(.pong)
                #expect(try await app.invalid().errorCode == 9015)
                try await app.send(text: #"{"cmd": "c2s_write", "req_sn": 8, "data": {"did": "x", "attrs": [1]}}"#)
                #expect(try await app.invalid(answering: 8).errorCode == 9015)
            }
            let wrongToken = UserSession(uid: stranger.uid, token: "ffffffffffffffffffffffffffffffff", expireAt: 0)
            await #expect(throws: TestFailure.self) { try await M2MTestClient.with(cloud, session: wrongToken) { _ in } }
        }
    }

    @Test("a device that goes silent is offline for apps within 1.5 × its keep-alive")
    func keepAliveExpiry() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                _ = try await app.onlineStatus(online: false)
                let silent = try await SilentMQTTDevice.connect(port: cloud.mqttPort!, device: device, keepAlive: 1)
                _ = try await app.onlineStatus(online: true)
                let started = ContinuousClock.now
                _ = try await app.onlineStatus(online: false, timeout: .seconds(5))
                let elapsed = ContinuousClock.now - started
                #expect(elapsed < .seconds(4), "offline after \(elapsed)")
                try? await silent.close()
            }
            let online = try await cloud.database.first("SELECT is_online FROM devices WHERE did = $1", .text(device.did))?.bool("is_online")
            #expect(online == false)
        }
    }

    @Test("service calls: the device gets thing.service.{id}, its answer and output land in the ledger")
    func serviceCall() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlinks = client.downlinks()
                let answer = try await cloud.call(.post, "/app/devices/\(device.did)/services/Reboot", token: user.token, json: ["params": ["delay": 3]])
                let id = try #require(answer["command_id"].flatMap { if case .int(let id) = $0 { id } else { nil } })
                let call = try await GatewayFixtures.nextDownlink(downlinks)
                #expect(call.topic.topic == .service("Reboot"))
                #expect(call.request?.method == "thing.service.Reboot")
                #expect(call.request?.params == ["delay": 3])
                try await client.reply(call.request!.reply(data: ["ok": 1]), to: call)
                let record = try await GatewayFixtures.waitForCommand(cloud, id, state: .acknowledged)
                #expect(record.body["output"] == ["ok": 1])
                let unknown = try await cloud.call(.post, "/app/devices/\(device.did)/services/Explode", token: user.token, json: ["params": [:]])
                #expect(unknown.errorCode == 9025)
                // Parameters are checked against the service's inputs, as data points are.
                for (params, named) in [
                    (["delay": 61] as JSONValue, "delay"), (["delay": "soon"], "delay"), (["delay": 1, "force": true], "force"), ([:], "delay"),
                ] {
                    let refused = try await cloud.call(.post, "/app/devices/\(device.did)/services/Reboot", token: user.token, json: ["params": params])
                    #expect(refused.errorCode == 9025, "\(params)")
                    #expect(refused["detail"]?.stringValue?.contains(named) == true, "\(refused.text)")
                }
                let count = try await cloud.database.first("SELECT COUNT(*) AS n FROM commands WHERE did = $1", .text(device.did))
                #expect(try count?.int("n") == 1, "refused calls leave nothing in the ledger")
            }
        }
    }

    @Test("an event post is answered and pushed to apps as s2c_event; an unknown event is refused")
    func events() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                    _ = try await app.subscribeResult()
                    #expect(try await client.postEvent("Overheat", value: ["Temperature": .double(88.5)]).code == 200)
                    let event = try await app.event()
                    #expect(event.identifier == "Overheat")
                    #expect(event.type == "alert")
                    #expect(event.values == ["Temperature": .double(88.5)])
                    #expect(try await client.postEvent("Unknown", value: [:]).code == 460)
                }
            }
        }
    }

    @Test("a second connection of the same device takes the first over; the device stays online")
    func takeover() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            try await GatewayFixtures.withDevice(cloud, device) { first in
                try await GatewayFixtures.withDevice(cloud, device) { second in
                    try await GatewayFixtures.waitUntil("the first connection is closed") { !first.mqtt.isConnected }
                    #expect(try await second.postProperties(["Brightness": 9]).code == 200)
                    try await Task.sleep(for: .milliseconds(200))
                    let online = try await cloud.database.first("SELECT is_online FROM devices WHERE did = $1", .text(device.did))?.bool("is_online")
                    #expect(online == true)
                }
            }
        }
    }

    @Test("dynamic registration: refused without TLS; allowed, the device gets its secret on /ext/register")
    func registration() async throws {
        for allowed in [false, true] {
            var gateway = CloudHarness.testGateway
            gateway.allowRegistrationWithoutTLS = allowed
            try await CloudHarness.run(.sqlite, gateway: gateway) { cloud in
                let product = try await GatewayFixtures.lampProduct(cloud)
                let device = try await GatewayFixtures.device(cloud, product: product)
                let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
                let credentials = AlinkCredentials.registration(identity, productSecret: product.productSecret, random: "AbCdEfGhIjKlMnO")
                let configuration = MQTTClientConfiguration(
                    host: "127.0.0.1", port: cloud.mqttPort!, clientID: credentials.clientID, username: credentials.username,
                    password: Array(credentials.password.utf8), reconnect: nil
                )
                do {
                    let secret = try await MQTTClient.withClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { client in
                        for await message in client.messages() where message.topic == "/ext/register" {
                            return try JSONValue.parse(message.payload.readableBytesView)["deviceSecret"]?.stringValue
                        }
                        return nil
                    }
                    #expect(allowed)
                    #expect(secret == device.deviceSecret)
                    // Once the device has connected with its own secret, the product secret no
                    // longer obtains it.
                    try await GatewayFixtures.withDevice(cloud, device) { client in _ = try await client.postProperties(["Brightness": 1]) }
                    let again = await #expect(throws: MQTTError.self) {
                        try await MQTTClient.withClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { _ in }
                    }
                    #expect(again?.reasonCode == .notAuthorized)
                } catch let error as MQTTError {
                    #expect(!allowed)
                    #expect(error.reasonCode == .notAuthorized)
                }
                var wrong = configuration
                wrong.password = Array("0000".utf8)
                await #expect(throws: MQTTError.self) { try await MQTTClient.withClient(configuration: wrong, logger: GatewayFixtures.quietLogger) { _ in } }
            }
        }
    }
}

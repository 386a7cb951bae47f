import Foundation
import HTTPTypes
import Testing
import Tether
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Linkage rules (reference §2.7): a user's own, evaluated on what real Alink devices report,
/// their outputs reaching other devices through the control path, each event taken once.
@Suite("Rules: a device's events set off its user's rules once, their outputs reach other devices", .timeLimit(.minutes(3)))
struct RuleTests {
    static func create(_ cloud: CloudHarness, _ user: UserSession, _ body: JSONValue) async throws -> RuleBody {
        let answer = try await cloud.call(.post, "/app/rules", token: user.token, json: body)
        #expect(answer.status == .created, "\(answer.text)")
        return try RuleBody(json: try #require(answer.json))
    }

    static func petHouse(_ cloud: CloudHarness) async throws -> Administration.CreatedProduct {
        try await cloud.admin.createProduct(name: "Pet house", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
    }

    static func control(_ did: String, _ attrs: JSONObject) -> JSONValue { ["type": "devctrl", "did": .string(did), "attrs": .object(attrs)] }

    @Test(
        "made, read, replaced and deleted by their owner; bad fields get their codes; params; nobody else sees them; a revoked share takes the guest's rule",
        arguments: TestEngine.allCases)
    func lifecycle(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, configure: ScheduleTests.handFired) { cloud in
            let lampProduct = try await GatewayFixtures.lampProduct(cloud)
            let houseProduct = try await Self.petHouse(cloud)
            let lamp = try await GatewayFixtures.device(cloud, product: lampProduct)
            let house = try await GatewayFixtures.device(cloud, product: houseProduct)
            let unbound = try await GatewayFixtures.device(cloud, product: lampProduct)
            let user = try await GatewayFixtures.user(cloud, boundTo: [lamp, house])
            let valid: JSONObject = [
                "name": "Hot house", "did": .string(house.did), "product_key": .string(houseProduct.productKey), "event": "data", "interval": 60,
                "input": [["did": .string(house.did), "product_key": .string(houseProduct.productKey), "prefix": "house"]],
                "condition": [[["left": "house.Temperature", "opt": ">", "right": "30"], ["left": "house.LED_OnOff", "opt": "==", "right": 1]]],
                "output": [[Self.control(lamp.did, ["WorkMode": "night"]), ["type": "delay", "delay": 5], Self.control(lamp.did, ["Brightness": 10])]],
            ]
            let rule = try await Self.create(cloud, user, .object(valid))
            #expect(rule.id.hasPrefix("rl_") && rule.fields.event == .data && rule.fields.interval == 60 && rule.lastFiredAt == nil)
            #expect(
                rule.fields.conditions == [
                    [
                        RuleComparison(.reference(prefix: "house", name: "Temperature"), .greater, .number(30)),
                        RuleComparison(.reference(prefix: "house", name: "LED_OnOff"), .equal, .number(1)),
                    ]
                ])
            let listed = try await cloud.call(.get, "/app/rules", token: user.token)
            #expect(try (listed["rules"]?.arrayValue ?? []).map { try RuleBody(json: $0) } == [rule])
            #expect(try await cloud.call(.get, "/app/rules/\(rule.id)", token: user.token)["rule_id"] == .string(rule.id))

            var replaced = valid
            replaced["name"] = "Alarm"
            replaced["event"] = "alert"
            replaced["event_attr"] = ["attr_name": "Alert_1", "value": "0"]
            let put = try await cloud.call(.put, "/app/rules/\(rule.id)", token: user.token, json: .object(replaced))
            #expect(put["name"] == "Alarm" && put["event_attr"] == ["attr_name": "Alert_1", "value": "0"])

            // Params: the products asked for, or those of the user's devices.
            let params = try await cloud.call(.get, "/app/rules/params?product_key=\(lampProduct.productKey)", token: user.token)
            let lampParams = try (params[lampProduct.productKey]?.arrayValue ?? []).map { try RuleParamBody(json: $0) }
            #expect(
                lampParams.first { $0.name == "WorkMode" }
                    == RuleParamBody(name: "WorkMode", displayName: "Mode", type: "enum", labels: ["manual", "reading", "night"]))
            #expect(lampParams.first { $0.name == "LightSwitch" }?.type == "bool" && lampParams.first { $0.name == "Label" }?.type == "binary")
            let all = try await cloud.call(.get, "/app/rules/params", token: user.token)
            #expect(Set(all.json?.objectValue?.keys ?? []) == [lampProduct.productKey, houseProduct.productKey])
            #expect(try await cloud.call(.get, "/app/rules/params?product_key=nope", token: user.token).errorCode == 9002)

            func with(_ key: String, _ value: JSONValue) -> JSONValue {
                var body = valid
                body[key] = value
                return .object(body)
            }
            for (body, code) in [
                (with("name", ""), Int64(9015)), (with("event", "boom"), 9015), (with("event", "alert"), 9015), (with("interval", -1), 9015),
                (with("output", []), 9015), (with("output", [[["type": "delay", "delay": 3601]]]), 9015), (with("output", [[["type": "jump"]]]), 9015),
                (with("condition", [[["left": "other.Temperature", "opt": ">", "right": "1"]]]), 9015),
                (with("condition", [[["left": "house.Temperature", "opt": ">", "right": "'x'"]]]), 9015),
                (with("condition", [[["left": "house.Nope", "opt": ">", "right": "1"]]]), 9025),
                (with("product_key", .string(lampProduct.productKey)), 9015),
                (with("did", .string(unbound.did)), 9017),
                (with("output", [[Self.control(unbound.did, ["LightSwitch": true])]]), 9017),
                (with("output", [[Self.control(lamp.did, ["Brightness": 101])]]), 9025),
                (with("output", [[Self.control(lamp.did, ["PowerConsumption": 1])]]), 9025),
                (
                    with(
                        "input",
                        [
                            ["did": .string(house.did), "product_key": .string(houseProduct.productKey), "prefix": "house"],
                            ["did": .string(unbound.did), "product_key": .string(lampProduct.productKey), "prefix": "x"],
                        ]), 9017
                ),
            ] {
                #expect(try await cloud.call(.post, "/app/rules", token: user.token, json: body).errorCode == code, "\(body.serialized())")
            }
            var alert = valid
            alert["event"] = "alert"
            alert["event_attr"] = ["attr_name": "Temperature"]
            #expect(try await cloud.call(.post, "/app/rules", token: user.token, json: .object(alert)).errorCode == 9025, "not an alert")
            alert["event"] = "fault"
            alert["event_attr"] = ["attr_name": "Fault_LED", "value": "1"]
            #expect(try await cloud.call(.post, "/app/rules", token: user.token, json: .object(alert)).status == .created)

            // Nobody else sees or changes them.
            let (stranger, guest, loggedOut) = try await GatewayFixtures.outsiders(cloud, of: house)
            // A model is told only to users with a device of the product.
            #expect(try await cloud.call(.get, "/app/rules/params?product_key=\(lampProduct.productKey)", token: stranger.token).errorCode == 9002)
            for outsider in [stranger, guest] {
                #expect(try await cloud.call(.get, "/app/rules", token: outsider.token)["rules"] == [])
                #expect(try await cloud.call(.get, "/app/rules/\(rule.id)", token: outsider.token).status == .notFound)
                #expect(try await cloud.call(.put, "/app/rules/\(rule.id)", token: outsider.token, json: .object(valid)).status == .notFound)
                #expect(try await cloud.call(.delete, "/app/rules/\(rule.id)", token: outsider.token).status == .notFound)
            }
            #expect(try await cloud.call(.get, "/app/rules", token: loggedOut.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/rules", token: loggedOut.token, json: .object(valid)).errorCode == 9004)
            // A guest may make a rule on the shared device (writing only what it may control)...
            var guestRule = valid
            guestRule["output"] = [[Self.control(house.did, ["LED_OnOff": true])]]
            let guests = try await Self.create(cloud, guest, .object(guestRule))
            #expect(try await cloud.call(.post, "/app/rules", token: guest.token, json: .object(valid)).errorCode == 9017, "the lamp is not shared")
            // ...until the share is revoked: the rule goes with the binding.
            try await cloud.database.query("DELETE FROM bindings WHERE uid = $1 AND did = $2", .text(guest.uid), .text(house.did))
            #expect(try await cloud.call(.get, "/app/rules/\(guests.id)", token: guest.token).status == .notFound)

            let deleted = try await cloud.call(.delete, "/app/rules/\(rule.id)", token: user.token)
            #expect(deleted["rule_id"] == .string(rule.id))
            #expect(try await cloud.call(.get, "/app/rules/\(rule.id)", token: user.token).status == .notFound)
        }
    }

    @Test(
        "alert transitions, data conditions with an interval, and going offline set off rules whose outputs reach another device",
        arguments: TestEngine.allCases)
    func firing(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: ScheduleTests.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: ScheduleTests.handFired) { cloud in
            let product = try await Self.petHouse(cloud)
            let house = try await GatewayFixtures.device(cloud, product: product)
            let other = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [house, other])
            let pk = JSONValue.string(product.productKey)
            let base: JSONObject = ["did": .string(house.did), "product_key": pk]
            func rule(_ fields: JSONObject) async throws -> RuleBody {
                var body = base
                for key in fields.keys { body[key] = fields[key] }
                return try await Self.create(cloud, user, .object(body))
            }
            _ = try await rule([
                "name": "on", "event": "alert", "event_attr": ["attr_name": "Alert_1", "value": "1"], "output": [[Self.control(other.did, ["LED_R": 1])]],
            ])
            _ = try await rule([
                "name": "off", "event": "alert", "event_attr": ["attr_name": "Alert_1", "value": "0"], "output": [[Self.control(other.did, ["LED_R": 2])]],
            ])
            let hot = try await rule([
                "name": "hot", "event": "data", "interval": 3600, "input": [["did": .string(house.did), "product_key": pk, "prefix": "h"]],
                "condition": [[["left": "h.Temperature", "opt": ">", "right": "30"]], [["left": "h.Humidity", "opt": ">=", "right": "90"]]],
                "output": [[Self.control(other.did, ["LED_G": 3])], [["type": "delay", "delay": 60], Self.control(other.did, ["LED_B": 4])]],
            ])
            _ = try await rule(["name": "gone", "event": "offline", "output": [[Self.control(other.did, ["Motor_Speed": 5])]]])

            try await GatewayFixtures.withDevice(cloud, other) { receiver in
                let downlinks = receiver.downlinks()
                try await AutomationFixtures.waitOnline(cloud, user, [other])
                func expectSet(_ params: JSONValue) async throws {
                    let set = try await GatewayFixtures.nextDownlink(downlinks)
                    #expect(set.topic.topic == .propertySet && set.request?.params == params)
                    try await receiver.reply(set.request!.reply(), to: set)
                }
                try await GatewayFixtures.withDevice(cloud, house) { trigger in
                    // Alert off at first, and cool: nothing.
                    #expect(try await trigger.postProperties(["Alert_1": 0, "Temperature": 20, "Humidity": 10]).code == 200)
                    // The alert occurs: the occurrence rule; again (no transition): nothing; it recovers.
                    #expect(try await trigger.postProperties(["Alert_1": 1]).code == 200)
                    try await expectSet(["LED_R": 1])
                    #expect(try await trigger.postProperties(["Alert_1": 1]).code == 200)
                    #expect(try await trigger.postProperties(["Alert_1": 0]).code == 200)
                    try await expectSet(["LED_R": 2])
                    // Hot: both output groups; the second after its delay. Hotter within the interval: nothing.
                    #expect(try await trigger.postProperties(["Temperature": 35]).code == 200)
                    try await expectSet(["LED_G": 3])
                    #expect(try await trigger.postProperties(["Temperature": 36]).code == 200)
                    clock.advance(seconds: 60)
                    #expect(try await cloud.node.automationRunner.advanceDue() == 1)
                    try await expectSet(["LED_B": 4])
                    #expect(try await cloud.call(.get, "/app/rules/\(hot.id)", token: user.token)["last_fired_at"] == .int(clock.nowMs() - 60_000))
                }
                // The trigger went offline.
                try await expectSet(["Motor_Speed": 5])
                let commands = try await cloud.database.first("SELECT COUNT(*) AS n FROM commands WHERE source = 'rule'")
                #expect(try commands?.int("n") == 5)
                #expect(try await cloud.database.first("SELECT COUNT(*) AS n FROM rule_events")?.int("n") == 0)
            }
        }
    }

    @Test("a thing-model alert event sets off a rule that writes another device")
    func tslEvent() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway, configure: ScheduleTests.handFired) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let hot = try await GatewayFixtures.device(cloud, product: product)
            let other = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [hot, other])
            let overheat: JSONObject = [
                "name": "overheat", "did": .string(hot.did), "product_key": .string(product.productKey), "event": "alert",
                "event_attr": ["attr_name": "Overheat", "value": "1"], "output": [[Self.control(other.did, ["LightSwitch": false])]],
            ]
            let rule = try await Self.create(cloud, user, .object(overheat))
            // An event recovers from nothing: refused.
            #expect(
                try await cloud.call(
                    .post, "/app/rules", token: user.token,
                    json: [
                        "name": "x", "did": .string(hot.did), "product_key": .string(product.productKey), "event": "alert",
                        "event_attr": ["attr_name": "Overheat", "value": "0"], "output": [[Self.control(other.did, ["LightSwitch": false])]],
                    ]
                ).errorCode == 9025)
            try await GatewayFixtures.withDevice(cloud, other) { receiver in
                let downlinks = receiver.downlinks()
                try await AutomationFixtures.waitOnline(cloud, user, [other])
                try await GatewayFixtures.withDevice(cloud, hot) { trigger in
                    #expect(try await trigger.postEvent("Overheat", value: ["Temperature": .double(88.5)]).code == 200)
                    let set = try await GatewayFixtures.nextDownlink(downlinks)
                    #expect(set.request?.params == ["LightSwitch": 0] || set.request?.params == ["LightSwitch": false])
                    // Replaced: the next event sets off what the rule says now.
                    var replaced = overheat
                    replaced["output"] = [[Self.control(other.did, ["Brightness": 5])]]
                    #expect(try await cloud.call(.put, "/app/rules/\(rule.id)", token: user.token, json: .object(replaced)).status == .ok)
                    #expect(try await trigger.postEvent("Overheat", value: ["Temperature": .double(90)]).code == 200)
                    #expect(try await GatewayFixtures.nextDownlink(downlinks).request?.params == ["Brightness": 5])
                }
            }
        }
    }

    @Test("two nodes on PostgreSQL take 30 events a stopped node left behind: each sets its rule off once")
    func twoNodesTakeEachEventOnce() async throws {
        try await AutomationFixtures.withTwoNodes { databaseA, databaseB in
            try await CloudHarness.serve(database: databaseA, gateway: CloudHarness.testGateway, configure: ScheduleTests.handFired) { cloud in
                let product = try await GatewayFixtures.lampProduct(cloud)
                let (trigger, target) = (try await GatewayFixtures.device(cloud, product: product), try await GatewayFixtures.device(cloud, product: product))
                let user = try await GatewayFixtures.user(cloud, boundTo: [trigger, target])
                _ = try await Self.create(
                    cloud, user,
                    [
                        "name": "every report", "did": .string(trigger.did), "product_key": .string(product.productKey), "event": "data",
                        "output": [[Self.control(target.did, ["LightSwitch": true])]],
                    ])
                try await GatewayFixtures.withDevice(cloud, target) { _ in
                    try await AutomationFixtures.waitOnline(cloud, user, [target])
                    // Left by a node that stopped before taking them.
                    let events = (0..<30).map { index in
                        (did: trigger.did, kind: RuleStore.Event.Kind.data, body: JSONValue.object(["Brightness": .int(Int64(index))]))
                    }
                    try await RuleStore(databaseA).enqueue(events, atMs: Clock.unixMilliseconds() - 60_000)
                    var configuration = SchedulerConfiguration()
                    configuration.batchSize = 4
                    let catalogueB = DeviceCatalogue(database: databaseB)
                    let runnerB = AutomationRunner(
                        database: databaseB, bus: LocalClusterBus(), control: AutomationControl(database: databaseB, catalogue: catalogueB),
                        clock: SystemWallClock(),
                        configuration: configuration, logger: TestEngine.logger)
                    let nodeB = RuleEngine(database: databaseB, catalogue: catalogueB, runner: runnerB, configuration: configuration, logger: TestEngine.logger)
                    async let takenA: Void = cloud.node.ruleEngine.process(ids: nil)
                    async let takenB: Void = nodeB.process(ids: nil)
                    _ = await (takenA, takenB)
                    #expect(try await databaseA.first("SELECT COUNT(*) AS n FROM rule_events")?.int("n") == 0)
                    #expect(try await databaseA.first("SELECT COUNT(*) AS n FROM automation_runs")?.int("n") == 30)
                    #expect(try await databaseA.first("SELECT COUNT(*) AS n FROM commands WHERE source = 'rule'")?.int("n") == 30)
                }
            }
        }
    }

    @Test("the SDK: rules made, listed, replaced and deleted; params; refusals with their codes")
    func sdk() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            try await AutomationFixtures.withSDKUser(cloud) { client, product, lamp in
                let fields = LinkageRuleFields(
                    name: "Off when offline", did: lamp.did, productKey: product.productKey, event: .offline,
                    outputs: [[.control(did: lamp.did, .attrs(["LightSwitch": false]))]])
                let rule = try await client.rules.create(fields)
                #expect(rule.fields == fields && rule.id.hasPrefix("rl_"))
                #expect(try await client.rules.list().map(\.id) == [rule.id])
                var changed = fields
                changed.interval = 30
                #expect(try await client.rules.update(rule.id, changed).fields.interval == 30)
                #expect(try await client.rules.rule(rule.id).fields.interval == 30)
                let params = try await client.rules.params()
                #expect(params[product.productKey]?.contains { $0.name == "Brightness" && $0.type == "int" } == true)
                let refused = await #expect(throws: TetherError.self) {
                    var bad = fields
                    bad.outputs = [[.control(did: lamp.did, .attrs(["Brightness": 500]))]]
                    _ = try await client.rules.create(bad)
                }
                #expect(refused?.cloudCode == 9025)
                try await client.rules.delete(rule.id)
                #expect(try await client.rules.list().isEmpty)
            }
        }
    }
}

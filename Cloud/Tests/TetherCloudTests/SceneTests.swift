import Foundation
import HTTPTypes
import Testing
import Tether
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Scenes (reference §2.8): a user's own, their device, group and delay tasks run in order by
/// durable runs, each step once, through the control path to real Alink devices.
@Suite("Scenes: a user's tasks run in order, delays kept across restarts, each step once", .timeLimit(.minutes(3)))
struct SceneTests {
    static func create(_ cloud: CloudHarness, _ user: UserSession, _ body: JSONValue) async throws -> SceneBody {
        let answer = try await cloud.call(.post, "/app/scene", token: user.token, json: body)
        #expect(answer.status == .created, "\(answer.text)")
        return try SceneBody(json: try #require(answer.json))
    }

    static func status(_ cloud: CloudHarness, _ user: UserSession, _ id: String) async throws -> SceneRunBody {
        try SceneRunBody(json: try #require(try await cloud.call(.get, "/app/scene/\(id)/task", token: user.token).json))
    }

    static func start(_ cloud: CloudHarness, _ user: UserSession, _ id: String) async throws -> String {
        let answer = try await cloud.call(.post, "/app/scene/\(id)/task", token: user.token)
        #expect(answer.status == .ok, "\(answer.text)")
        return try SceneStartBody(json: try #require(answer.json)).runID
    }

    @Test(
        "made, read, replaced (PUT and POST) and deleted by their owner; bad tasks get the reference's codes; nobody else sees them",
        arguments: TestEngine.allCases)
    func lifecycle(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, configure: ScheduleTests.handFired) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await GatewayFixtures.device(cloud, product: product)
            let unbound = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [lamp])
            let group = try await GroupTests.create(cloud, user, ["group_name": "Lamps", "product_key": .string(product.productKey)])
            let mixed = try await GroupTests.create(cloud, user, ["group_name": "All"])

            let scene = try await Self.create(
                cloud, user,
                [
                    "scene_name": "Evening", "remark": "dim",
                    "tasks": [
                        ["task_type": "device", "did": .string(lamp.did), "attrs": ["WorkMode": 2, "LightSwitch": true]],
                        ["task_type": "delay", "time": 60],
                        ["task_type": "group", "group_id": .string(group.id), "attrs": ["Brightness": 30]],
                    ],
                ])
            #expect(scene.id.hasPrefix("se_") && scene.name == "Evening" && scene.remark == "dim" && scene.tasks.count == 3)
            #expect(scene.tasks[0].productKey == product.productKey && scene.tasks[0].productName == "Lamp")
            #expect(scene.tasks[2].groupName == "Lamps" && scene.tasks[1].task == .delay(seconds: 60))
            #expect(try await Self.status(cloud, user, scene.id) == SceneRunBody(status: .notExecuted))
            let listed = try await cloud.call(.get, "/app/scene", token: user.token).json?.arrayValue ?? []
            #expect(try listed.map { try SceneBody(json: $0) } == [scene])

            // The reference's top-level form is a scene of one task; updates by PUT and by POST.
            let single = try await Self.create(
                cloud, user, ["scene_name": "Off", "task_type": "device", "did": .string(lamp.did), "attrs": ["LightSwitch": false]])
            #expect(single.tasks.map(\.task) == [.device(did: lamp.did, .attrs(["LightSwitch": false]))])
            let put = try await cloud.call(
                .put, "/app/scene/\(single.id)", token: user.token, json: ["scene_name": "All off", "tasks": [["task_type": "delay", "time": 5]]])
            #expect(put["scene_name"] == "All off" && put["tasks"]?.arrayValue?.count == 1)
            let post = try await cloud.call(
                .post, "/app/scene/\(single.id)", token: user.token,
                json: ["scene_name": "Raw", "tasks": [["task_type": "device", "did": .string(lamp.did), "raw": "AQID"]]])
            #expect(post.status == .ok && post["tasks"]?.arrayValue?.first?["raw"] == "AQID" && post["tasks"]?.arrayValue?.first?["binary_coding"] == "base64")

            func task(_ task: JSONValue) -> JSONValue { ["scene_name": "x", "tasks": [task]] }
            for (body, code) in [
                (task(["task_type": "delay", "time": 0]), Int64(9015)), (task(["task_type": "delay", "time": 3601]), 9015),
                (task(["task_type": "wait", "time": 1]), 9015), (["scene_name": "x", "tasks": []], 9015),
                (["scene_name": "", "tasks": [["task_type": "delay", "time": 1]]], 9015),
                (task(["task_type": "device", "did": .string(lamp.did), "attrs": ["Nope": 1]]), 9025),
                (task(["task_type": "device", "did": .string(lamp.did), "attrs": ["Brightness": 101]]), 9025),
                (task(["task_type": "device", "did": .string(lamp.did), "attrs": ["WorkMode": 3]]), 9025),
                (task(["task_type": "device", "did": .string(lamp.did), "attrs": ["PowerConsumption": 3]]), 9025),
                (task(["task_type": "device", "did": .string(lamp.did)]), 9015),
                (task(["task_type": "device", "did": .string(unbound.did), "attrs": ["LightSwitch": true]]), 9017),
                (task(["task_type": "group", "group_id": .string(mixed.id), "attrs": ["LightSwitch": true]]), 9015),
                (task(["task_type": "group", "group_id": "gr_nope", "attrs": ["LightSwitch": true]]), 9517),
            ] {
                #expect(try await cloud.call(.post, "/app/scene", token: user.token, json: body).errorCode == code, "\(body.serialized())")
            }

            // Nobody else sees, changes, runs or deletes them: a stranger, a guest of the lamp, a
            // logged-out user.
            let (stranger, guest, loggedOut) = try await GatewayFixtures.outsiders(cloud, of: lamp)
            for outsider in [stranger, guest] {
                #expect(try await cloud.call(.get, "/app/scene", token: outsider.token).json?.arrayValue?.isEmpty == true)
                #expect(try await cloud.call(.get, "/app/scene/\(scene.id)", token: outsider.token).errorCode == 9220)
                #expect(
                    try await cloud.call(
                        .put, "/app/scene/\(scene.id)", token: outsider.token, json: ["scene_name": "mine", "tasks": [["task_type": "delay", "time": 1]]]
                    ).errorCode == 9220)
                #expect(try await cloud.call(.post, "/app/scene/\(scene.id)/task", token: outsider.token).errorCode == 9220)
                #expect(try await cloud.call(.get, "/app/scene/\(scene.id)/task", token: outsider.token).errorCode == 9220)
                #expect(try await cloud.call(.delete, "/app/scene/\(scene.id)", token: outsider.token).errorCode == 9220)
                // The guest may control the lamp, but not through the owner's group.
                #expect(
                    try await cloud.call(
                        .post, "/app/scene", token: outsider.token,
                        json: task(["task_type": "group", "group_id": .string(group.id), "attrs": ["LightSwitch": true]])
                    ).errorCode == 9517)
            }
            #expect(try await cloud.call(.get, "/app/scene", token: loggedOut.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/scene/\(scene.id)/task", token: loggedOut.token).errorCode == 9004)

            // A scene's schedule goes with the scene.
            let schedule = try await ScheduleTests.create(cloud, user, ["scene_id": .string(scene.id), "time": "07:00", "repeat": "mon"])
            #expect(schedule.fields.target == .scene(id: scene.id))
            #expect(try await cloud.call(.delete, "/app/scene/\(scene.id)", token: user.token).status == .ok)
            #expect(try await cloud.call(.get, "/app/scene/\(scene.id)", token: user.token).errorCode == 9220)
            #expect(try await cloud.call(.get, "/app/common_scheduler/\(schedule.id)", token: user.token).errorCode == 9030)
        }
    }

    @Test(
        "a run reaches real devices: a device task at once, a group's after the delay; an offline or unbound device fails the run",
        arguments: TestEngine.allCases)
    func run(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: ScheduleTests.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: ScheduleTests.handFired) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let first = try await GatewayFixtures.device(cloud, product: product)
            let second = try await GatewayFixtures.device(cloud, product: product)
            let offline = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [first, second, offline])
            let group = try await GroupTests.create(cloud, user, ["group_name": "Lamps", "product_key": .string(product.productKey)])
            _ = try await cloud.call(.post, "/app/group/\(group.id)/devices", token: user.token, json: ["dids": [.string(first.did), .string(second.did)]])
            let scene = try await Self.create(
                cloud, user,
                [
                    "scene_name": "Evening",
                    "tasks": [
                        ["task_type": "device", "did": .string(first.did), "attrs": ["WorkMode": 2]],
                        ["task_type": "delay", "time": 60],
                        ["task_type": "group", "group_id": .string(group.id), "attrs": ["Brightness": 30]],
                    ],
                ])
            try await GatewayFixtures.withDevice(cloud, first) { one in
                try await GatewayFixtures.withDevice(cloud, second) { two in
                    let downlinks = [one.downlinks(), two.downlinks()]
                    try await AutomationFixtures.waitOnline(cloud, user, [first, second])
                    let runID = try await Self.start(cloud, user, scene.id)
                    // The device task went before the answer: the enum by its index.
                    let mode = try await GatewayFixtures.nextDownlink(downlinks[0])
                    #expect(mode.topic.topic == .propertySet && mode.request?.params == ["WorkMode": 2])
                    try await one.reply(mode.request!.reply(), to: mode)
                    var status = try await Self.status(cloud, user, scene.id)
                    #expect(status.status == .running && status.runID == runID && status.steps.count == 1)
                    let modeCommand = try #require(status.steps.first?.commandID)
                    let record = try await GatewayFixtures.waitForCommand(cloud, modeCommand, state: .acknowledged)
                    #expect(record.source == .scene)

                    // 59 s later the delay holds; at 60 s the group's two lamps are written.
                    clock.advance(seconds: 59)
                    #expect(try await cloud.node.automationRunner.advanceDue() == 0)
                    clock.advance(seconds: 1)
                    #expect(try await cloud.node.automationRunner.advanceDue() == 1)
                    for (client, downlink) in zip([one, two], downlinks) {
                        let set = try await GatewayFixtures.nextDownlink(downlink)
                        #expect(set.topic.topic == .propertySet && set.request?.params == ["Brightness": 30])
                        try await client.reply(set.request!.reply(), to: set)
                    }
                    status = try await Self.status(cloud, user, scene.id)
                    #expect(status.status == .completed && status.finishedAt == clock.nowMs())
                    #expect(status.steps.map(\.step) == [0, 2, 2] && Set(status.steps.dropFirst().map(\.did)) == [first.did, second.did])
                    #expect(status.steps.allSatisfy { $0.succeeded })
                    #expect(try await cloud.node.automationRunner.advanceDue() == 0)

                    // An offline device fails its step; the scene goes on and ends failed.
                    let mixed = try await Self.create(
                        cloud, user,
                        [
                            "scene_name": "Mixed",
                            "tasks": [
                                ["task_type": "device", "did": .string(offline.did), "attrs": ["LightSwitch": true]],
                                ["task_type": "device", "did": .string(second.did), "attrs": ["LightSwitch": true]],
                            ],
                        ])
                    _ = try await Self.start(cloud, user, mixed.id)
                    let on = try await GatewayFixtures.nextDownlink(downlinks[1])
                    #expect(on.request?.params == ["LightSwitch": 1] || on.request?.params == ["LightSwitch": true])
                    status = try await Self.status(cloud, user, mixed.id)
                    #expect(status.status == .failed && status.steps.map(\.errorCode) == [9042, nil])

                    // A device whose binding ended since the scene was made (revoked): refused 9017.
                    let revoked = try await Self.create(
                        cloud, user, ["scene_name": "Gone", "tasks": [["task_type": "device", "did": .string(offline.did), "attrs": ["LightSwitch": true]]]])
                    #expect(try await cloud.call(.delete, "/app/bindings", token: user.token, json: ["devices": [["did": .string(offline.did)]]]).status == .ok)
                    _ = try await Self.start(cloud, user, revoked.id)
                    status = try await Self.status(cloud, user, revoked.id)
                    #expect(status.status == .failed && status.steps.map(\.errorCode) == [9017])
                }
            }
        }
    }

    @Test("a delay outlives a restart: the node that comes back takes the step once; a schedule runs a scene", arguments: TestEngine.allCases)
    func restartAndSchedule(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: ScheduleTests.utc(2027, 3, 20, 12))
        try await engine.withDatabase { database in
            let (app, user, device, scene) = try await CloudHarness.serve(
                database: database, gateway: CloudHarness.testGateway, clock: clock, configure: ScheduleTests.handFired
            ) { cloud in
                let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
                let scene = try await Self.create(
                    cloud, user,
                    [
                        "scene_name": "Later",
                        "tasks": [["task_type": "delay", "time": 600], ["task_type": "device", "did": .string(device.did), "attrs": ["LightSwitch": true]]],
                    ])
                _ = try await Self.start(cloud, user, scene.id)
                #expect(try await Self.status(cloud, user, scene.id).status == .running)
                return (cloud.app, user, device, scene)
            }
            clock.advance(seconds: 601)
            try await CloudHarness.serve(database: database, gateway: CloudHarness.testGateway, app: app, clock: clock, configure: ScheduleTests.handFired) {
                cloud in
                try await GatewayFixtures.waitUntil("the node took the step as it started") {
                    try await Self.status(cloud, user, scene.id).status != .running
                }
                #expect(try await cloud.node.automationRunner.advanceDue() == 0)
                let status = try await Self.status(cloud, user, scene.id)
                // The lamp is not connected: the step was taken, once, and refused.
                #expect(status.status == .failed && status.steps.map(\.step) == [1] && status.steps.first?.errorCode == 9042)

                // A common schedule of the scene starts a run of it at its time.
                let schedule = try await ScheduleTests.create(
                    cloud, user, ["scene_id": .string(scene.id), "date": "2027-03-20", "time": "13:00", "repeat": "none"])
                clock.set(unixSeconds: ScheduleTests.utc(2027, 3, 20, 13))
                #expect(try await cloud.node.scheduleFiring.fireDue() == .init(fired: 1))
                let run = try #require(try await ScheduleTests.runs(cloud, user, schedule.id).first)
                let runID = try #require(run.runID)
                #expect(run.commandID == nil && run.state == "running")
                #expect(try await Self.status(cloud, user, scene.id).runID == runID)
                _ = device
            }
        }
    }

    @Test("two nodes on PostgreSQL: 40 runs' delayed steps taken once each, not twice")
    func twoNodesTakeEachStepOnce() async throws {
        let clock = ManualWallClock(unixSeconds: ScheduleTests.utc(2027, 6, 1, 12))
        try await AutomationFixtures.withTwoNodes { databaseA, databaseB in
            try await CloudHarness.serve(database: databaseA, gateway: CloudHarness.testGateway, clock: clock, configure: AutomationFixtures.smallBatches) { cloud in
                let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
                try await GatewayFixtures.withDevice(cloud, device) { _ in
                    try await AutomationFixtures.waitOnline(cloud, user, [device])
                    let scene = try await Self.create(
                        cloud, user,
                        [
                            "scene_name": "Later",
                            "tasks": [["task_type": "delay", "time": 5], ["task_type": "device", "did": .string(device.did), "attrs": ["Brightness": 7]]],
                        ])
                    for _ in 0..<40 { _ = try await Self.start(cloud, user, scene.id) }
                    clock.advance(seconds: 5)
                    var configuration = SchedulerConfiguration()
                    configuration.batchSize = 7
                    let catalogueB = DeviceCatalogue(database: databaseB)
                    let nodeB = AutomationRunner(
                        database: databaseB, bus: LocalClusterBus(), control: AutomationControl(database: databaseB, catalogue: catalogueB), clock: clock,
                        configuration: configuration, logger: TestEngine.logger)
                    async let advancedA = cloud.node.automationRunner.advanceDue()
                    async let advancedB = nodeB.advanceDue()
                    let (a, b) = try await (advancedA, advancedB)
                    #expect(a + b == 40)
                    let commands = try await databaseA.first("SELECT COUNT(*) AS n FROM commands WHERE source = 'scene'")
                    #expect(try commands?.int("n") == 40)
                    let runs = try await databaseA.first("SELECT COUNT(*) AS n FROM automation_runs WHERE state = 'completed'")
                    #expect(try runs?.int("n") == 40)
                }
            }
        }
    }

    @Test("the SDK: scenes made, run, read back with their run's steps, replaced and deleted")
    func sdk() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            try await AutomationFixtures.withSDKUser(cloud) { client, product, lamp in
                let fields = DeviceSceneFields(name: "Night", tasks: [DeviceSceneTask(.device(did: lamp.did, .attrs(["WorkMode": 2])))])
                let scene = try await client.scenes.create(fields)
                #expect(scene.name == "Night" && scene.tasks.first?.productKey == product.productKey)
                #expect(try await client.scenes.list().map(\.id) == [scene.id])
                #expect(try await client.scenes.status(of: scene.id).status == .notExecuted)
                let runID = try await client.scenes.run(scene.id)
                let run = try await client.scenes.status(of: scene.id)
                #expect(run.runID == runID && run.status == .failed && run.steps.map(\.errorCode) == [9042], "the lamp is not connected")
                let updated = try await client.scenes.update(scene.id, DeviceSceneFields(name: "Later", tasks: [DeviceSceneTask(.delay(seconds: 30))]))
                #expect(updated.name == "Later")
                #expect(try await client.scenes.scene(scene.id) == updated)
                let refused = await #expect(throws: TetherError.self) {
                    try await client.scenes.create(DeviceSceneFields(name: "Bad", tasks: [DeviceSceneTask(.device(did: lamp.did, .attrs(["WorkMode": 9])))]))
                }
                #expect(refused?.cloudCode == 9025)
                try await client.scenes.delete(scene.id)
                let gone = await #expect(throws: TetherError.self) { try await client.scenes.status(of: scene.id) }
                #expect(gone?.cloudCode == 9220)
            }
        }
    }
}

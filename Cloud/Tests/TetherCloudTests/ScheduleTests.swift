import Foundation
import HTTPTypes
import Testing
import Tether
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Schedules: the Open API's per-device and common schedulers, fired by the cloud at the
/// instants their zone says, once each, through the control path to real Alink devices.
@Suite("Schedules: written by their owner, fired once through the ledger at the zone's wall-clock time", .timeLimit(.minutes(3)))
struct ScheduleTests {
    /// Unix seconds of a UTC wall-clock time.
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int64 = 0, _ minute: Int64 = 0) -> Int64 {
        ScheduleDate(year: year, month: month, day: day)!.dayNumber * 86_400 + hour * 3600 + minute * 60
    }

    /// The test fires by hand: the node's own loop looks once, at start.
    static let handFired: @Sendable (inout CloudConfiguration) -> Void = { $0.scheduler.interval = .seconds(3600) }

    static func create(_ cloud: CloudHarness, _ user: UserSession, did: String? = nil, _ body: JSONValue) async throws -> ScheduleBody {
        let path = did.map { "/app/devices/\($0)/scheduler" } ?? "/app/common_scheduler"
        let answer = try await cloud.call(.post, path, token: user.token, json: body)
        #expect(answer.status == .created, "\(answer.text)")
        return try ScheduleBody(json: try #require(answer.json))
    }

    static func runs(_ cloud: CloudHarness, _ user: UserSession, _ id: String) async throws -> [ScheduleRunBody] {
        let answer = try await cloud.call(.get, "/app/common_scheduler/\(id)/logs?limit=100", token: user.token)
        return try (answer.json?.arrayValue ?? []).map { try ScheduleRunBody(json: $0) }
    }

    static func change(_ events: AsyncStream<TetherClientEvent>) async -> ScheduleChange? {
        await SharingMessageTests.firstEvent(events) { event in if case .schedules(let change) = event { change } else { nil } }
    }

    static func schedulePush(_ app: M2MTestClient) async throws -> ScheduleChangeBody {
        try await app.next("s2c_schedules") { frame -> ScheduleChangeBody? in if case .schedules(let change) = frame { change } else { nil } }
    }

    @Test("created, read, replaced and deleted by their owner, pushed to the owner's sessions; bad fields get the reference's codes", arguments: TestEngine.allCases)
    func lifecycle(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let (product, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let unbound = try await GatewayFixtures.device(cloud, product: product)
            try await M2MTestClient.with(cloud, session: user) { app in
                let created = try await Self.create(
                    cloud, user, did: device.did,
                    ["time": "07:00", "repeat": "fri,mon", "tz": "Europe/Berlin", "attrs": ["LightSwitch": true], "remark": "wake up"])
                #expect(created.id.hasPrefix("sc_") && created.productKey == product.productKey && created.fields.remark == "wake up")
                #expect(created.fields.recurrence.repetition == .weekly([.mon, .fri]) && created.fields.target == .device(did: device.did))
                // Monday 22 March 2027, 07:00 CET.
                #expect(created.nextRun == Self.utc(2027, 3, 22, 6))
                #expect(created.json["repeat"] == "mon,fri" && created.json["tz"] == "Europe/Berlin")
                let pushed = try await Self.schedulePush(app)
                #expect(pushed == ScheduleChangeBody(id: created.id, change: .created, did: device.did))

                let perDevice = try await cloud.call(.get, "/app/devices/\(device.did)/scheduler", token: user.token)
                #expect(perDevice.json?.arrayValue?.compactMap { $0["id"]?.stringValue } == [created.id])
                #expect(try await cloud.call(.get, "/app/common_scheduler", token: user.token).json?.arrayValue?.count == 1)
                #expect(try await cloud.call(.get, "/app/common_scheduler?did=\(unbound.did)", token: user.token).json?.arrayValue?.isEmpty == true)
                // The per-device path sees only its own device's schedules.
                #expect(try await cloud.call(.get, "/app/devices/\(unbound.did)/scheduler/\(created.id)", token: user.token).errorCode == 9030)

                // Monthly on the 31st: 31 March 2027, 07:00 CEST (summer time began on the 28th).
                let monthly = try await cloud.call(
                    .put, "/app/common_scheduler/\(created.id)", token: user.token,
                    json: ["did": .string(device.did), "time": "07:00", "repeat": "day", "days": ["31"], "tz": "Europe/Berlin", "attrs": ["Brightness": 40]])
                #expect(monthly.status == .ok, "\(monthly.text)")
                #expect(monthly["next_run"] == .int(Self.utc(2027, 3, 31, 5)) && monthly["days"] == ["31"])
                #expect(try await Self.schedulePush(app).change == .updated)
                let disabled = try await cloud.call(
                    .put, "/app/devices/\(device.did)/scheduler/\(created.id)", token: user.token,
                    json: ["time": "07:00", "repeat": "day", "days": ["31"], "attrs": ["Brightness": 40], "enabled": false])
                #expect(disabled["enabled"] == false && disabled["next_run"] == .null && disabled["tz"] == "UTC")
                #expect(try await Self.schedulePush(app).change == .updated)

                #expect(try await cloud.call(.delete, "/app/devices/\(device.did)/scheduler/\(created.id)", token: user.token).status == .ok)
                #expect(try await Self.schedulePush(app) == ScheduleChangeBody(id: created.id, change: .deleted, did: device.did))
                #expect(try await cloud.call(.get, "/app/common_scheduler/\(created.id)", token: user.token).errorCode == 9030)
                #expect(try await cloud.call(.delete, "/app/common_scheduler/\(created.id)", token: user.token).errorCode == 9030)
            }

            let did = JSONValue.string(device.did)
            let refusals: [(JSONValue, Int64)] = [
                (["did": did, "time": "25:00", "repeat": "mon", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "7:00", "repeat": "mon", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "date": "2027-02-30", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "date": "2027-03-19", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "none", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "mon", "tz": "Mars/Olympus", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "funday", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "day", "days": [], "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "day", "days": ["32"], "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "mon", "start_date": "2027-05-01", "end_date": "2027-04-01", "attrs": ["LightSwitch": true]], 9015),
                // Between these dates no day is a Monday: it would never run.
                (["did": did, "time": "07:00", "repeat": "mon", "start_date": "2027-04-06", "end_date": "2027-04-11", "attrs": ["LightSwitch": true]], 9015),
                (["did": did, "time": "07:00", "repeat": "mon", "attrs": ["Nope": 1]], 9025),
                (["did": did, "time": "07:00", "repeat": "mon", "attrs": ["Brightness": 1000]], 9025),
                (["did": did, "time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true], "raw": "0102"], 9015),
                (["did": did, "time": "07:00", "repeat": "mon", "raw": "zz"], 9015),
                (["did": did, "time": "07:00", "repeat": "mon"], 9015),
                (["did": did, "time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true], "queue_ttl": -1], 9015),
                (["did": did, "time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true], "remark": .string(String(repeating: "x", count: 300))], 9015),
                (["group_id": "g1", "time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true]], 9517),
                (["scene_id": "s1", "time": "07:00", "repeat": "mon"], 9220),
                (["time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true]], 9015),
                (["did": .string(unbound.did), "time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true]], 9017),
            ]
            for (body, code) in refusals {
                let answer = try await cloud.call(.post, "/app/common_scheduler", token: user.token, json: body)
                #expect(answer.errorCode == code, "\(body.serialized()) → \(answer.text)")
            }
            // Raw bytes in Base64 keep their coding.
            let raw = try await Self.create(
                cloud, user, ["did": did, "time": "23:59", "repeat": "sun", "raw": "AQID", "binary_coding": "base64", "start_date": "2027-04-01"])
            #expect(raw.fields.command == .raw([1, 2, 3], base64: true) && raw.json["raw"] == "AQID" && raw.nextRun == .some(Self.utc(2027, 4, 4, 23, 59)))
            #expect(try await cloud.call(.get, "/app/common_scheduler", token: user.token).json?.arrayValue?.count == 1)
        }
    }

    @Test("only its owner reads or changes a schedule; a guest schedules what it may control, until the share ends", arguments: TestEngine.allCases)
    func rights(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let product = try await cloud.admin.createProduct(
                name: "Shared lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: true)
            let device = try await GatewayFixtures.device(cloud, product: product)
            let owner = try await GatewayFixtures.user(cloud, boundTo: [device])
            let body: JSONValue = ["did": .string(device.did), "time": "07:00", "repeat": "mon", "attrs": ["LightSwitch": true]]
            let mine = try await Self.create(cloud, owner, did: device.did, body)
            // outsiders(of:) binds its logged-out user by passcode, which a shared product's owner
            // does not allow: the same three, made here.
            let suffix = UInt32.random(in: 0...UInt32.max)
            let stranger = try await cloud.register("stranger\(suffix)")
            let insertedGuest = try await cloud.register("inserted\(suffix)")
            try await cloud.database.query(
                "INSERT INTO bindings (uid, did, role, created_at) VALUES ($1, $2, 'guest', 0)", .text(insertedGuest.uid), .text(device.did))
            let loggedOut = try await cloud.register("leaving\(suffix)")
            #expect(try await cloud.call(.post, "/app/logout", token: loggedOut.token).status == .ok)
            for user in [stranger, insertedGuest] {
                #expect(try await cloud.call(.get, "/app/common_scheduler/\(mine.id)", token: user.token).errorCode == 9030)
                #expect(try await cloud.call(.put, "/app/common_scheduler/\(mine.id)", token: user.token, json: body).errorCode == 9030)
                #expect(try await cloud.call(.delete, "/app/common_scheduler/\(mine.id)", token: user.token).errorCode == 9030)
                #expect(try await cloud.call(.get, "/app/common_scheduler/\(mine.id)/logs", token: user.token).errorCode == 9030)
                #expect(try await cloud.call(.get, "/app/common_scheduler", token: user.token).json?.arrayValue?.isEmpty == true)
            }
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)/scheduler", token: stranger.token).errorCode == 9017)
            #expect(try await cloud.call(.post, "/app/devices/\(device.did)/scheduler", token: stranger.token, json: body).errorCode == 9017)
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)/scheduler", token: loggedOut.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/common_scheduler", token: loggedOut.token, json: body).errorCode == 9004)
            #expect(try await cloud.call(.get, "/app/common_scheduler", token: nil).status.code >= 400)

            // A guest by invitation schedules the device, and loses the schedule with the share.
            let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
            let invitation = try await GatewayFixtures.shareAccepted(cloud, did: device.did, from: owner, to: guest)
            let guests = try await Self.create(cloud, guest, did: device.did, body)
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)/scheduler", token: guest.token).json?.arrayValue?.count == 1)
            #expect(try await cloud.call(.delete, "/app/sharing/\(invitation.id)", token: owner.token).status == .ok)
            #expect(try await cloud.call(.get, "/app/common_scheduler/\(guests.id)", token: guest.token).errorCode == 9030)
            let left = try await cloud.database.first("SELECT COUNT(*) AS n FROM schedules WHERE uid = $1", .text(guest.uid))
            #expect(try left?.int("n") == 0)
            // The owner's own schedule is untouched.
            #expect(try await cloud.call(.get, "/app/common_scheduler/\(mine.id)", token: owner.token).status == .ok)
        }
    }

    @Test("a run reaches the device through the gateway once, as the scheduler's command in the ledger, and is logged", arguments: TestEngine.allCases)
    func firesToDevice(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 22, 5, 58))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let schedule = try await Self.create(
                cloud, user, did: device.did, ["time": "07:00", "repeat": "mon", "tz": "Europe/Berlin", "attrs": ["Brightness": 70, "WorkMode": "night"]])
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlinks = client.downlinks()
                try await GatewayFixtures.waitUntil("the device is online") {
                    try await cloud.call(.get, "/app/devices/\(device.did)", token: user.token)["is_online"] == true
                }
                #expect(try await cloud.node.scheduleFiring.fireDue() == .init())
                clock.set(unixSeconds: Self.utc(2027, 3, 22, 6))
                #expect(try await cloud.node.scheduleFiring.fireDue() == .init(fired: 1))
                let downlink = try await GatewayFixtures.nextDownlink(downlinks)
                #expect(downlink.topic.topic == .propertySet)
                #expect(downlink.request?.params == ["Brightness": 70, "WorkMode": 2])
                try await client.reply(downlink.request!.reply(), to: downlink)
                let commandID = try #require(Int64(downlink.request?.id ?? ""))
                let command = try await GatewayFixtures.waitForCommand(cloud, commandID, state: .acknowledged)
                #expect(command.source == .scheduler && command.uid == user.uid)
                #expect(try await cloud.call(.get, "/app/commands/\(commandID)", token: user.token)["source"] == "scheduler")
                // Never twice, however often a node looks.
                #expect(try await cloud.node.scheduleFiring.fireDue() == .init())
                let runs = try await Self.runs(cloud, user, schedule.id)
                #expect(runs.count == 1 && runs[0].plannedAt == Self.utc(2027, 3, 22, 6) * 1000 && runs[0].commandID == commandID)
                #expect(runs[0].state == "acknowledged" || runs[0].state == "applied")
                // The next Monday is in summer time: 07:00 CEST.
                #expect(try await cloud.call(.get, "/app/common_scheduler/\(schedule.id)", token: user.token)["next_run"] == .int(Self.utc(2027, 3, 29, 5)))
            }
            // The device is offline at the next run: refused, and logged so.
            try await GatewayFixtures.waitUntil("the device is offline") {
                try await cloud.call(.get, "/app/devices/\(device.did)", token: user.token)["is_online"] == false
            }
            clock.set(unixSeconds: Self.utc(2027, 3, 29, 5))
            #expect(try await cloud.node.scheduleFiring.fireDue() == .init(refused: 1))
            let latest = try await Self.runs(cloud, user, schedule.id).first
            #expect(latest?.state == "refused" && latest?.errorCode == 9042 && latest?.commandID == nil)
        }
    }

    @Test("07:00 in Berlin stays 07:00 across both changes of the clocks; 02:30 on the change days fires once; end_date and disabled", arguments: TestEngine.allCases)
    func wallClockAcrossChanges(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            // The device never connects; queued runs still count as fired (the ledger keeps them).
            let base: JSONValue = ["did": .string(device.did), "tz": "Europe/Berlin", "attrs": ["LightSwitch": true], "queue_ttl": 60]
            func schedule(_ extra: JSONObject) async throws -> ScheduleBody {
                var body = base.objectValue!
                for key in extra.keys { body[key] = extra[key] }
                return try await Self.create(cloud, user, .object(body))
            }
            let daily = try await schedule(["time": "07:00", "repeat": "mon,tue,wed,thu,fri,sat,sun", "end_date": "2027-03-29"])
            let night = try await schedule(["time": "02:30", "repeat": "sun"])
            let off = try await schedule(["time": "07:00", "repeat": "mon,tue,wed,thu,fri,sat,sun", "enabled": false])
            // Every half hour for two weeks: each run fires when it is due.
            for instant in stride(from: Self.utc(2027, 3, 20, 12), through: Self.utc(2027, 4, 2), by: 1800) {
                clock.set(unixSeconds: instant)
                try await cloud.node.scheduleFiring.fireDue()
            }
            let dailyRuns = try await Self.runs(cloud, user, daily.id).map(\.plannedAt).reversed().map { $0 / 1000 }
            // 21–27 March at 06:00 UTC (CET), 28–29 March at 05:00 UTC (CEST); nothing after end_date.
            let expected = (21...27).map { Self.utc(2027, 3, $0, 6) } + [Self.utc(2027, 3, 28, 5), Self.utc(2027, 3, 29, 5)]
            #expect(Array(dailyRuns) == expected)
            #expect(try await cloud.call(.get, "/app/common_scheduler/\(daily.id)", token: user.token)["next_run"] == .null)
            // 02:30 does not exist on 28 March: it runs at 03:30 CEST (01:30 UTC), once.
            let nightRuns = try await Self.runs(cloud, user, night.id).map(\.plannedAt).reversed().map { $0 / 1000 }
            #expect(Array(nightRuns) == [Self.utc(2027, 3, 21, 1, 30), Self.utc(2027, 3, 28, 1, 30)])
            #expect(try await Self.runs(cloud, user, off.id).isEmpty)
            for id in [daily.id, night.id] {
                #expect(try await Self.runs(cloud, user, id).allSatisfy { $0.state == "queued" || $0.state == "expired" })
            }

            // 31 October: 02:30 happens twice; it runs once, at the first (00:30 UTC, CEST).
            let autumn = try await schedule(["time": "02:30", "repeat": "sun", "start_date": "2027-10-31", "end_date": "2027-10-31"])
            for minutes: Int64 in stride(from: 0, through: 240, by: 30) {
                clock.set(unixSeconds: Self.utc(2027, 10, 31) + minutes * 60)
                try await cloud.node.scheduleFiring.fireDue()
            }
            let autumnRuns = try await Self.runs(cloud, user, autumn.id).map { $0.plannedAt / 1000 }
            #expect(autumnRuns == [Self.utc(2027, 10, 31, 0, 30)])
        }
    }

    @Test("after downtime a run missed by less than the grace period fires once at start; older ones are logged missed", arguments: TestEngine.allCases)
    func downtime(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 5, 3, 6))
        try await engine.withDatabase { database in
            let (app, user, schedules) = try await CloudHarness.serve(database: database, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) {
                cloud in
                let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
                let schedule = try await Self.create(
                    cloud, user, did: device.did, ["time": "07:00", "repeat": "mon,tue,wed,thu,fri,sat,sun", "attrs": ["LightSwitch": true], "queue_ttl": 60])
                // Without queue_ttl: a late run still waits for the device within the grace period.
                let late = try await Self.create(cloud, user, did: device.did, ["time": "07:00", "repeat": "mon,tue,wed,thu,fri,sat,sun", "attrs": ["LightSwitch": true]])
                return (cloud.app, user, [schedule, late])
            }
            let (schedule, late) = (schedules[0], schedules[1])
            // The cloud was down over 07:00 and comes back two minutes later: its scheduler fires
            // the run as it starts, once.
            clock.set(unixSeconds: Self.utc(2027, 5, 3, 7, 2))
            try await CloudHarness.serve(database: database, gateway: CloudHarness.testGateway, app: app, clock: clock, configure: Self.handFired) { cloud in
                try await GatewayFixtures.waitUntil("the runs fired at start") {
                    let (first, second) = (try await Self.runs(cloud, user, schedule.id).count, try await Self.runs(cloud, user, late.id).count)
                    return first == 1 && second == 1
                }
                #expect(try await cloud.node.scheduleFiring.fireDue() == .init())
                #expect(try await Self.runs(cloud, user, schedule.id).first?.state == "queued")
                #expect(try await Self.runs(cloud, user, late.id).first?.state == "queued")
            }
            // Down for three days: two runs are long past, the third is a minute late.
            clock.set(unixSeconds: Self.utc(2027, 5, 6, 7, 1))
            try await CloudHarness.serve(database: database, gateway: CloudHarness.testGateway, app: app, clock: clock, configure: Self.handFired) { cloud in
                try await GatewayFixtures.waitUntil("the runs since were handled at start") {
                    let (first, second) = (try await Self.runs(cloud, user, schedule.id).count, try await Self.runs(cloud, user, late.id).count)
                    return first == 4 && second == 4
                }
                #expect(try await cloud.node.scheduleFiring.fireDue() == .init())
                let runs = try await Self.runs(cloud, user, schedule.id)
                #expect(runs.map(\.plannedAt) == [6, 5, 4, 3].map { Self.utc(2027, 5, $0, 7) * 1000 })
                #expect(runs.map { $0.state == "missed" } == [false, true, true, false])
                #expect(runs[1].firedAt == nil && runs[1].commandID == nil && runs[0].commandID != nil)
                #expect(try await cloud.call(.get, "/app/common_scheduler/\(schedule.id)", token: user.token)["next_run"] == .int(Self.utc(2027, 5, 7, 7)))
            }
        }
    }

    @Test("a schedule that cannot be read is logged and set aside without holding the others up; a disabled user's runs are refused", arguments: TestEngine.allCases)
    func poisonAndDisabledUser(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let (product, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let body: JSONValue = ["time": "13:00", "repeat": "sat", "attrs": ["LightSwitch": true], "queue_ttl": 60]
            let broken = try await Self.create(cloud, user, did: device.did, body)
            let sound = try await Self.create(cloud, user, did: device.did, body)
            // Fields this build cannot read (a zone a node's database dropped, say).
            try await cloud.database.query("UPDATE schedules SET body = $2 WHERE id = $1", .text(broken.id), .text("{\"time\":\"13:00\",\"tz\":\"Gone/Zone\"}"))
            clock.set(unixSeconds: Self.utc(2027, 3, 20, 13))
            #expect(try await cloud.node.scheduleFiring.fireDue() == .init(fired: 1, refused: 1))
            let brokenRuns = try await ScheduleStore(cloud.database).runs(scheduleID: broken.id, limit: 10, skip: 0)
            #expect(brokenRuns.count == 1 && brokenRuns.first?.state == "refused" && brokenRuns.first?.errorCode == 9008)
            #expect(try await cloud.database.first("SELECT next_run_ms FROM schedules WHERE id = $1", .text(broken.id))?.optionalInt("next_run_ms") == nil)
            #expect(try await Self.runs(cloud, user, sound.id).first?.state == "queued")

            // A user an operator disabled controls nothing through schedules either.
            let other = try await GatewayFixtures.device(cloud, product: product)
            let disabled = try await GatewayFixtures.user(cloud, boundTo: [other])
            let theirs = try await Self.create(cloud, disabled, did: other.did, body)
            #expect(try await UserStore(cloud.database).setDisabled(uid: disabled.uid, true, now: Clock.unixNow()))
            clock.set(unixSeconds: Self.utc(2027, 3, 27, 13))
            #expect(try await cloud.node.scheduleFiring.fireDue() == .init(fired: 1, refused: 1))
            let refused = try await ScheduleStore(cloud.database).runs(scheduleID: theirs.id, limit: 10, skip: 0)
            #expect(refused.first?.state == "refused" && refused.first?.errorCode == 9026)
        }
    }

    @Test("a one-time schedule that ran can still be disabled or moved; an edit never brings back a run already logged", arguments: TestEngine.allCases)
    func editsAfterRuns(engine: TestEngine) async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 20, 12))
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let once = try await Self.create(cloud, user, did: device.did, ["time": "13:00", "date": "2027-03-20", "attrs": ["LightSwitch": true], "queue_ttl": 60])
            clock.set(unixSeconds: Self.utc(2027, 3, 20, 13))
            #expect(try await cloud.node.scheduleFiring.fireDue() == .init(fired: 1))
            let path = "/app/devices/\(device.did)/scheduler/\(once.id)"
            let disabled = try await cloud.call(
                .put, path, token: user.token, json: ["time": "13:00", "date": "2027-03-20", "attrs": ["LightSwitch": true], "enabled": false])
            #expect(disabled.status == .ok && disabled["next_run"] == .null, "\(disabled.text)")
            // Enabled again with the time it already ran at: nothing is left to run.
            let again = try await cloud.call(.put, path, token: user.token, json: ["time": "13:00", "date": "2027-03-20", "attrs": ["LightSwitch": true]])
            #expect(again.errorCode == 9015)
            // The clock of the node that takes the edit is behind the one that fired: still not again.
            let weekly = try await Self.create(cloud, user, did: device.did, ["time": "13:00", "repeat": "sat", "attrs": ["LightSwitch": true], "queue_ttl": 60])
            clock.set(unixSeconds: Self.utc(2027, 3, 27, 13))
            #expect(try await cloud.node.scheduleFiring.fireDue() == .init(fired: 1))
            clock.set(unixSeconds: Self.utc(2027, 3, 27, 12, 59))
            let edited = try await cloud.call(
                .put, "/app/common_scheduler/\(weekly.id)", token: user.token,
                json: ["did": .string(device.did), "time": "13:00", "repeat": "SAT", "attrs": ["LightSwitch": false], "queue_ttl": 60])
            #expect(edited["next_run"] == .int(Self.utc(2027, 4, 3, 13)), "\(edited.text)")
            clock.set(unixSeconds: Self.utc(2027, 3, 27, 13, 1))
            #expect(try await cloud.node.scheduleFiring.fireDue() == .init())
        }
    }

    @Test("the SDK: typed schedules created, listed, changed and deleted; another session of the same user hears each change")
    func sdk() async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 3, 20, 12))
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway, clock: clock, configure: Self.handFired) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            let name = "scheduler\(UInt32.random(in: 0...UInt32.max))"
            _ = try await GatewayFixtures.user(cloud, boundTo: [device], name: name)
            let configuration = try SharingMessageTests.cloudOnlyConfiguration(cloud)
            try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { phone in
                try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { tablet in
                    let tabletEvents = tablet.events()
                    _ = try await phone.account!.login(username: name, password: "Passw0rd!")
                    _ = try await tablet.account!.login(username: name, password: "Passw0rd!")
                    let connected = await SharingMessageTests.firstEvent(tabletEvents) { event in if case .cloudConnected = event { true } else { nil } }
                    #expect(connected == true)
                    // Each change is waited for on a subscription made before the change.
                    var changes = tablet.events()

                    let fields = ScheduleFields(
                        target: .device(did: device.did),
                        recurrence: ScheduleRecurrence(
                            repetition: .weekly([.mon, .fri]), time: ScheduleTime(hour: 7, minute: 0)!, zone: ScheduleZone(identifier: "Europe/Berlin")!),
                        command: .attrs(["LightSwitch": true]))
                    let created = try await phone.schedules.create(fields)
                    #expect(created.fields == fields && created.nextRun == Self.utc(2027, 3, 22, 6))
                    #expect(created.nextRun == fields.recurrence.nextRun(after: clock.nowMs() / 1000), "the SDK computes the run the cloud will fire")
                    #expect(await Self.change(changes) == ScheduleChange(id: created.id, change: .created, did: device.did))
                    #expect(try await tablet.schedules.list().map(\.id) == [created.id])
                    #expect(try await tablet.schedules.list(did: device.did).map(\.id) == [created.id])

                    var disabled = fields
                    disabled.enabled = false
                    changes = tablet.events()
                    let updated = try await phone.schedules.update(created.id, disabled)
                    #expect(updated.nextRun == nil && !updated.fields.enabled)
                    #expect(await Self.change(changes)?.change == .updated)
                    #expect(try await phone.schedules.runs(of: created.id).isEmpty)

                    var tooBright = fields
                    tooBright.command = .attrs(["Brightness": 1000])
                    let refused = await #expect(throws: TetherError.self) { try await phone.schedules.create(tooBright) }
                    #expect(refused?.cloudCode == 9025)

                    changes = tablet.events()
                    try await phone.schedules.delete(created.id)
                    #expect(await Self.change(changes)?.change == .deleted)
                    let gone = await #expect(throws: TetherError.self) { try await tablet.schedules.schedule(created.id) }
                    #expect(gone?.cloudCode == 9030)
                }
            }
        }
    }

    @Test("two nodes on PostgreSQL: 100 schedules due at the same instant fire 100 times, not 200")
    func twoNodesFireOnce() async throws {
        let clock = ManualWallClock(unixSeconds: Self.utc(2027, 6, 1, 12))
        try await AutomationFixtures.withTwoNodes { databaseA, databaseB in
            try await CloudHarness.serve(database: databaseA, gateway: CloudHarness.testGateway, clock: clock, configure: AutomationFixtures.smallBatches) { cloud in
                let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
                // 1 June 2027 is a Tuesday: all hundred are due at 13:00 today.
                for brightness in 0..<100 {
                    _ = try await Self.create(
                        cloud, user, did: device.did, ["time": "13:00", "repeat": "tue", "attrs": ["Brightness": .int(Int64(brightness))], "queue_ttl": 60])
                }
                // The hundred-and-first is past the limit per device.
                let extra = try await cloud.call(
                    .post, "/app/devices/\(device.did)/scheduler", token: user.token, json: ["time": "13:00", "repeat": "tue", "attrs": ["LightSwitch": true]])
                #expect(extra.errorCode == 9015)
                clock.set(unixSeconds: Self.utc(2027, 6, 1, 13, 1))
                var configuration = SchedulerConfiguration()
                configuration.batchSize = 7
                let catalogueB = DeviceCatalogue(database: databaseB)
                let nodeB = ScheduleFiring(
                    database: databaseB, bus: LocalClusterBus(), catalogue: catalogueB, control: AutomationControl(database: databaseB, catalogue: catalogueB),
                    clock: clock, configuration: configuration, logger: TestEngine.logger)
                async let firedA = cloud.node.scheduleFiring.fireDue()
                async let firedB = nodeB.fireDue()
                let (a, b) = try await (firedA, firedB)
                #expect(a.fired + b.fired == 100 && a.refused + b.refused == 0)
                let runs = try await databaseA.first("SELECT COUNT(*) AS n, COUNT(DISTINCT schedule_id) AS s FROM schedule_runs")
                #expect(try runs?.int("n") == 100 && runs?.int("s") == 100)
                let commands = try await databaseA.first("SELECT COUNT(*) AS n FROM commands WHERE source = 'scheduler'")
                #expect(try commands?.int("n") == 100)
                #expect(try await nodeB.fireDue() == .init())
            }
        }
    }
}

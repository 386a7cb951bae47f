import Logging
import Testing
import TetherCore
@testable import TetherCloud

@Suite("Presence in batches: a connect storm costs a few statements, and nothing is out of order", .timeLimit(.minutes(2)))
struct PresenceBatchTests {
    @Test("batched sightings: the later one wins, only the holder can mark a device offline, statements span chunks", arguments: TestEngine.allCases)
    func sightings(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            let created = try await Self.devices(20, named: "d", in: database)
            let dids = created.map(\.did)
            let store = DeviceStore(database)
            let online = try await store.markOnline(
                dids.map { DeviceStore.Sighting(did: $0, atMs: 1_000, remoteAddress: "127.0.0.2:\($0.count)") }, node: "a", perStatement: 7)
            #expect(online == Set(dids))
            // An older sighting by another node says nothing; a newer one moves the device.
            #expect(try await store.markOnline([DeviceStore.Sighting(did: dids[0], atMs: 500)], node: "b").isEmpty)
            #expect(try await store.markOnline([DeviceStore.Sighting(did: dids[1], atMs: 1_500)], node: "b") == [dids[1]])
            // Node a no longer holds dids[1]: its disconnection does not take the device offline.
            let offline = try await store.markOffline(
                dids.map { DeviceStore.Sighting(did: $0, atMs: 2_000, connectedAtMs: 1_000) }, node: "a", perStatement: 7)
            #expect(offline == Set(dids).subtracting([dids[1]]))
            let rows = try await database.query("SELECT did, is_online, online_node, connection_started_ms, activated_ms FROM devices")
            for row in rows {
                let did = try row.text("did")
                #expect(try row.bool("is_online") == (did == dids[1]), "\(did)")
                #expect(try row.int("connection_started_ms") == (did == dids[1] ? 1_500 : 1_000))
                #expect(try row.int("activated_ms") == 1_000)
            }
            // A node that does not know the connection's start ends whichever it held.
            #expect(try await store.markOffline([DeviceStore.Sighting(did: dids[1], atMs: 2_000)], node: "b") == [dids[1]])
            // The coalesced credential lookup: every name asked for that exists, nothing else.
            let found = try await store.credentials(productKey: created[0].productKey, deviceNames: created.prefix(5).map(\.deviceName) + ["nobody"])
            #expect(Set(found.keys) == Set(created.prefix(5).map(\.deviceName)))
            #expect(found[created[0].deviceName]?.deviceSecret == created[0].deviceSecret)
            #expect(try await store.credentials(productKey: "other", deviceNames: [created[0].deviceName]).isEmpty)
        }
    }

    @Test(
        "an offline ends only the connection it belongs to, whichever node writes first; a node thought dead takes back what is still its own",
        arguments: TestEngine.allCases)
    func connectionScoped(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            let dids = try await Self.devices(5, named: "moved-", in: database).map(\.did)
            let store = DeviceStore(database)
            func row(_ did: String) async throws -> (online: Bool, node: String?) {
                let row = try await database.first("SELECT is_online, online_node FROM devices WHERE did = $1", .text(did))
                return (try row?.bool("is_online") ?? false, row?.optionalText("online_node"))
            }
            _ = try await store.markOnline(dids.map { DeviceStore.Sighting(did: $0, atMs: 1_000) }, node: "a")
            // Device 0 moves to b at 1.5 s; a's connection closes at 2 s. b writes first.
            _ = try await store.markOnline([DeviceStore.Sighting(did: dids[0], atMs: 1_500)], node: "b")
            #expect(try await store.markOffline([DeviceStore.Sighting(did: dids[0], atMs: 2_000, connectedAtMs: 1_000)], node: "a").isEmpty)
            #expect(try await row(dids[0]) == (true, "b"))
            // Device 1 makes the same move, but a writes first: its later end time must not win.
            #expect(try await store.markOffline([DeviceStore.Sighting(did: dids[1], atMs: 2_000, connectedAtMs: 1_000)], node: "a") == [dids[1]])
            #expect(try await store.markOnline([DeviceStore.Sighting(did: dids[1], atMs: 1_500)], node: "b") == [dids[1]])
            #expect(try await row(dids[1]) == (true, "b"))
            // Node a looked dead: its devices 2, 3, 4 are swept (held by nobody). Device 3 then
            // connects to b; device 4's connection on a ends normally.
            try await NodeStore(database).heartbeat("b", atMs: Clock.unixMilliseconds())
            #expect(Set(try await store.markOfflineOnDeadNodes(aliveSinceMs: Clock.unixMilliseconds() - 60_000)) == Set(dids[2...]))
            _ = try await store.markOnline([DeviceStore.Sighting(did: dids[3], atMs: 3_000)], node: "b")
            // a was alive: it takes back device 2 only. Device 3 has moved; device 4's
            // connection is gone from a's own list, so a does not ask for it.
            let reclaimed = try await store.reclaim(
                [DeviceStore.Sighting(did: dids[2], atMs: 1_000), DeviceStore.Sighting(did: dids[3], atMs: 1_000)], node: "a")
            #expect(reclaimed == [dids[2]])
            #expect(try await row(dids[2]) == (true, "a"))
            #expect(try await row(dids[3]) == (true, "b"))
            #expect(try await row(dids[4]) == (false, nil))
            // Device 2's connection on a then ends: it is a's, so it goes offline.
            #expect(try await store.markOffline([DeviceStore.Sighting(did: dids[2], atMs: 4_000, connectedAtMs: 1_000)], node: "a") == [dids[2]])
            // A normal offline is never reclaimed: the row still names its node.
            #expect(try await store.reclaim([DeviceStore.Sighting(did: dids[2], atMs: 1_000)], node: "a").isEmpty)
        }
    }

    @Test("a node whose heartbeat was late by half the liveness timeout checks what was swept")
    func lateHeartbeat() {
        #expect(!NodeHousekeeping.mayHaveLookedDead(lastWrittenMs: 10_000, nowMs: 11_200, nodeTimeoutMs: 15_000))
        #expect(NodeHousekeeping.mayHaveLookedDead(lastWrittenMs: 10_000, nowMs: 18_000, nodeTimeoutMs: 15_000))
    }

    @Test("rounds keep each device's changes in order, and no device twice in a round")
    func rounds() {
        typealias Change = DevicePresence.Change
        let changes = [
            Change(did: "a", atMs: 1, kind: .online(remoteAddress: "")), Change(did: "b", atMs: 1, kind: .online(remoteAddress: "")),
            Change(did: "a", atMs: 2, kind: .offline(reason: "x")), Change(did: "c", atMs: 2, kind: .online(remoteAddress: "")),
            Change(did: "a", atMs: 3, kind: .online(remoteAddress: "")), Change(did: "d", atMs: 3, kind: .offline(reason: "y")),
        ]
        let rounds = DevicePresence.rounds(changes)
        #expect(rounds.map { $0.map(\.did) } == [["a", "b"], ["a", "c"], ["a", "d"]])
        #expect(rounds.flatMap { $0 }.map(\.atMs) == changes.map(\.atMs))
        #expect(DevicePresence.rounds([]).isEmpty)
    }

    @Test("a storm of devices connecting at once: each online once in the history, then each offline once", arguments: TestEngine.allCases)
    func storm(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let total = 150
            let devices = try await Self.devices(total, named: "storm-", in: cloud)
            let connections = try await withThrowingTaskGroup(of: SilentMQTTDevice.self) { group in
                for device in devices { group.addTask { try await SilentMQTTDevice.connect(port: cloud.mqttPort!, device: device, keepAlive: 600) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            func count(_ sql: String) async throws -> Int64 { try await cloud.database.first(sql)?.int("n") ?? -1 }
            try await GatewayFixtures.waitUntil("every device online") {
                try await count("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1") == Int64(total)
            }
            #expect(try await count("SELECT COUNT(*) AS n FROM device_log WHERE kind = 'dev_online'") == Int64(total))
            #expect(try await count("SELECT COUNT(DISTINCT did) AS n FROM device_log WHERE kind = 'dev_online' AND ip <> ''") == Int64(total))
            for connection in connections { try await connection.close() }
            try await GatewayFixtures.waitUntil("every device offline") {
                try await count("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1") == 0
            }
            #expect(try await count("SELECT COUNT(*) AS n FROM device_log WHERE kind = 'dev_offline'") == Int64(total))
        }
    }

    @Test("the devices of a node that stopped heartbeating are swept offline in one go; the live node's stay online", arguments: TestEngine.allCases)
    func deadNodeSweep(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let devices = try await Self.devices(40, named: "swept-", in: cloud)
            let live = try await SilentMQTTDevice.connect(port: cloud.mqttPort!, device: devices[0], keepAlive: 600)
            func count(_ sql: String) async throws -> Int64 { try await cloud.database.first(sql)?.int("n") ?? -1 }
            try await GatewayFixtures.waitUntil("the live device online") {
                try await count("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1") == 1
            }
            // A node that held 39 devices and last beat a minute ago.
            let long = Clock.unixMilliseconds() - 60_000
            try await NodeStore(cloud.database).heartbeat("ghost", atMs: long)
            _ = try await DeviceStore(cloud.database).markOnline(
                devices.dropFirst().map { DeviceStore.Sighting(did: $0.did, atMs: long) }, node: "ghost")
            #expect(try await count("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1") == 40)
            try await GatewayFixtures.waitUntil(timeout: .seconds(20), "the ghost's devices offline") {
                try await count("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1") == 1
            }
            #expect(try await count("SELECT COUNT(*) AS n FROM device_log WHERE kind = 'dev_offline' AND body LIKE '%node gone%'") == 39)
            let stillOnline = try await cloud.database.first("SELECT is_online FROM devices WHERE did = $1", .text(devices[0].did))?.bool("is_online")
            #expect(stillOnline == true)
            // This node itself looked dead to someone: its connected device is taken back.
            #expect(try await DeviceStore(cloud.database).markOfflineOnDeadNodes(aliveSinceMs: .max) == [devices[0].did])
            try await cloud.node.gateway!.presence.reclaim()
            let reclaimed = try await cloud.database.first("SELECT is_online FROM devices WHERE did = $1", .text(devices[0].did))?.bool("is_online")
            #expect(reclaimed == true)
            #expect(try await count("SELECT COUNT(*) AS n FROM device_log WHERE kind = 'dev_online' AND body LIKE '%node back%'") == 1)
            try await live.close()
            try await GatewayFixtures.waitUntil("the live device offline once it leaves") {
                try await count("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1") == 0
            }
        }
    }

    @Test("a node restarted under its name after a crash clears what its previous process left online", arguments: TestEngine.allCases)
    func restartUnderSameName(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            let devices = try await Self.devices(3, named: "left-", in: database)
            // The previous process (killed: no leave()) held two; another node holds the third.
            _ = try await DeviceStore(database).markOnline(devices.prefix(2).map { DeviceStore.Sighting(did: $0.did, atMs: 1_000) }, node: "node-x")
            _ = try await DeviceStore(database).markOnline([DeviceStore.Sighting(did: devices[2].did, atMs: 1_000)], node: "node-y")
            // node-y is alive (else the dead-node sweep would rightly take its device too).
            try await NodeStore(database).heartbeat("node-y", atMs: Clock.unixMilliseconds())
            var gateway = CloudHarness.testGateway
            gateway.nodeID = "node-x"
            let node = DeviceGateway(
                configuration: gateway, bindAddress: "127.0.0.1", database: database, bus: LocalClusterBus(),
                publicAddress: PublicAddress(configuration: CloudConfiguration()), logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await node.run() }
                try await GatewayFixtures.waitUntil("the previous process's devices offline") {
                    try await database.first("SELECT COUNT(*) AS n FROM devices WHERE is_online = 1")?.int("n") == 1
                }
                group.cancelAll()
            }
            let other = try await database.first("SELECT is_online, online_node FROM devices WHERE did = $1", .text(devices[2].did))
            #expect(try other?.bool("is_online") == true)
            #expect(try other?.text("online_node") == "node-y")
            let logged = try await database.first("SELECT COUNT(*) AS n FROM device_log WHERE kind = 'dev_offline' AND body LIKE '%gateway restarted%'")?.int(
                "n")
            #expect(logged == 2)
        }
    }

    /// `count` devices of a new product, named `prefix` and a number.
    static func devices(_ count: Int, named prefix: String, in database: any SQLDatabase) async throws -> [Administration.CreatedDevice] {
        let admin = Administration(database: database)
        let product = try await admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
        return try await admin.createDevices((0..<count).map { DeviceEntry(productKey: product.productKey, name: prefix + String($0)) })
    }

    /// `count` devices of the gateway tests' lamp product, in a running cloud.
    static func devices(_ count: Int, named prefix: String, in cloud: CloudHarness) async throws -> [Administration.CreatedDevice] {
        let product = try await GatewayFixtures.lampProduct(cloud)
        return try await Administration(database: cloud.database).createDevices(
            (0..<count).map { DeviceEntry(productKey: product.productKey, name: prefix + String($0)) })
    }
}

import Foundation
import Logging
import NIOCore
import Testing
import Tether
import TetherAgent
import TetherAlink
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// `Device` control over the LAN and the cloud with one subscription: LAN first, the cloud when
/// the LAN link drops, back to the LAN when it returns; binding by LAN subscription, by QR code
/// and by did; unbinding; two users kept apart.
@Suite("SDK control over LAN and cloud", .timeLimit(.minutes(2)))
struct SDKControlTests {
    /// A lamp registered in the cloud and simulated in-process: its LAN side (which can be
    /// stopped and started) and its cloud link, under the identity the cloud gave it.
    struct Lamp {
        let created: Administration.CreatedDevice
        let virtual: VirtualDevice
        let link: CloudLink
        let model: ThingModel

        init(_ cloud: CloudHarness, product: Administration.CreatedProduct, mac: String? = nil) async throws {
            created = try await cloud.admin.createDevice(productKey: product.productKey, name: "lamp-\(UInt32.random(in: 0...UInt32.max))", mac: mac)
            var model = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))
            // The cloud gave the product its own key; the app's model must carry it.
            model.productKey = product.productKey
            self.model = model
            var generator = SplitMix64(seed: UInt64.random(in: 0...UInt64.max))
            var identity = DeviceIdentity.random(productKey: product.productKey, using: &generator)
            identity.did = created.did
            identity.passcode = created.passcode
            virtual = try VirtualDevice(model: model, identity: identity, bindable: true)
            link = CloudLink(device: virtual, configuration: try GatewayFixtures.configuration(cloud, created), logger: GatewayFixtures.quietLogger)
        }

        func lanServer(udpPort: Int = 0, tcpPort: Int = 0) -> LANDeviceServer {
            LANDeviceServer(
                device: virtual,
                configuration: LANDeviceConfiguration(host: "127.0.0.1", udpPort: udpPort, tcpPort: tcpPort, announcementTarget: .some(nil)),
                logger: GatewayFixtures.quietLogger
            )
        }
    }

    static func configuration(_ cloud: CloudHarness, products: [ThingModel], discovery: LANDeviceAddresses? = nil) throws -> TetherClient.Configuration {
        TetherClient.Configuration(
            products: products,
            lan: LANConfiguration(
                discoveryEnabled: discovery != nil,
                discoveryTargets: discovery.map { [LANEndpoint(host: $0.host, port: $0.udpPort)] } ?? [],
                discoveryInterval: .milliseconds(200), presenceTimeout: .seconds(1), tcpPort: discovery?.tcpPort ?? 12416,
                connectTimeout: .seconds(1), requestTimeout: .seconds(5),
                heartbeatInterval: .milliseconds(500), heartbeatTimeout: .milliseconds(500),
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(500))
            ),
            cloud: .init(
                endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID,
                sessionStore: MemorySessionStore(), requestTimeout: .seconds(20), bindingsRefreshInterval: .seconds(3600),
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
            )
        )
    }

    /// Reads the bindings until the cloud says every one of `devices` is connected to it.
    static func waitUntilOnline(_ client: TetherClient, _ devices: Device...) async throws {
        try await GatewayFixtures.waitUntil("the cloud reports \(devices.map(\.did)) online") {
            try await client.refreshBindings()
            return devices.allSatisfy(\.isOnlineInCloud)
        }
    }

    @Test("one subscription: bound on the LAN, moves to the cloud when the LAN goes, back when it returns, status resynchronised")
    func failover() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await Lamp(cloud, product: product)
            let linked = Task { await lamp.link.run() }
            defer { linked.cancel() }
            let firstLAN = lamp.lanServer()
            let serving = Task { try await firstLAN.run() }
            let addresses = try await firstLAN.addresses()

            try await withTetherClient(configuration: Self.configuration(cloud, products: [lamp.model], discovery: addresses), logger: GatewayFixtures.quietLogger) { client in
                let clientEvents = Task {
                    var seen: [String] = []
                    for await event in client.events() {
                        switch event {
                        case .account(.loggedIn): seen.append("loggedIn")
                        case .cloudConnected: seen.append("cloudConnected")
                        case .deviceNetStatus(_, let status): seen.append("device \(status)")
                        default: break
                        }
                    }
                    return seen
                }
                try await Task.sleep(for: .milliseconds(50))
                try await client.account!.register(username: "failover", password: "Passw0rd!")
                let device = try #require(await SDKDeviceListTests.list(client) { !$0.isEmpty }).first!
                #expect(!device.isBound)

                // Subscribing on the LAN binds the device to the user through the cloud.
                try await device.subscribe()
                // On a loaded machine the LAN login may finish after the cloud path is up; the
                // device then moves to the LAN as soon as it does.
                try await GatewayFixtures.waitUntil("the device is controlled on the LAN") { device.controlPath == .lan }
                #expect(device.isBound)
                #expect(try await client.account!.api.bindings(client.account!.session!).map(\.did) == [lamp.created.did])
                let onLAN = try await device.write(["Brightness": 10], sn: 7)
                #expect(onLAN.sn == 7 && onLAN.status?.data["Brightness"] == .int(10))

                // The LAN goes: the same subscription carries on through the cloud.
                let events = device.events()
                serving.cancel()
                _ = try? await serving.value
                try await GatewayFixtures.waitUntil(timeout: .seconds(10), "the device is controlled through the cloud") { device.controlPath == .cloud }
                #expect(device.netStatus == .controllable)
                let throughCloud = try await device.write(["Brightness": 33], sn: 8)
                #expect(throughCloud.sn == 8)
                #expect(throughCloud.status?.data["Brightness"] == .int(33), "the report that answers sn 8 comes back")
                #expect(lamp.virtual.status.data["Brightness"] == .int(33))
                #expect(try await device.getStatus().data["Brightness"] == .int(33))
                var sawReport = false
                for await event in events {
                    if case .status(let report) = event, report.sn == 8 { sawReport = true; break }
                }
                #expect(sawReport)

                // A change made while the app was away is there after the move back.
                let back = lamp.lanServer(udpPort: addresses.udpPort, tcpPort: addresses.tcpPort)
                let servingAgain = Task { try await back.run() }
                defer { servingAgain.cancel() }
                try await GatewayFixtures.waitUntil(timeout: .seconds(10), "the device is back on the LAN") { device.controlPath == .lan }
                let afterReturn = try await device.write(["Brightness": 50])
                #expect(afterReturn.status?.data["Brightness"] == .int(50))
                #expect(device.status.data["Brightness"] == .int(50))
                clientEvents.cancel()
                let seen = await clientEvents.value
                #expect(seen.contains("loggedIn") && seen.contains("cloudConnected") && seen.contains("device controllable"), "\(seen)")
            }
        }
    }

    @Test("a device only the cloud reaches: bound by QR code, controlled, unbound and gone from the list")
    func qrBinding() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await Lamp(cloud, product: product, mac: "02:11:22:33:44:55")
            let linked = Task { await lamp.link.run() }
            defer { linked.cancel() }
            // No model in the configuration: the client fetches the product's from the cloud.
            try await withTetherClient(configuration: Self.configuration(cloud, products: []), logger: GatewayFixtures.quietLogger) { client in
                try await client.account!.register(username: "scanner", password: "Passw0rd!")
                let scanned = try BindingQRCode(productKey: product.productKey, mac: "021122334455", productSecret: product.productSecret).text
                let wrong = try BindingQRCode(productKey: product.productKey, mac: "021122334455", productSecret: "not-the-secret")
                let refused = await #expect(throws: TetherError.self) { try await client.bind(wrong) }
                #expect(refused?.code == .cloudRefused)

                let device = try await client.bind(BindingQRCode(text: scanned), alias: "desk")
                #expect(device.did == lamp.created.did)
                #expect(device.alias == "desk")
                #expect(client.devices == [device])
                try await Self.waitUntilOnline(client, device)
                try await device.subscribe()
                #expect(device.model?.productKey == product.productKey, "the model came from the cloud")
                #expect(client.model(forProductKey: product.productKey) != nil)
                #expect(device.controlPath == .cloud)
                #expect(device.status.data["Brightness"] != nil, "subscribing read the status")
                let result = try await device.write(["LightSwitch": true])
                #expect(result.status?.data["LightSwitch"] == .bool(true))
                #expect(lamp.virtual.status.data["LightSwitch"] == .bool(true))

                try await device.setCustomInfo(remark: "by the window")
                #expect(try await client.refreshBindings().first?.remark == "by the window")

                try await device.unbind()
                #expect(client.devices.isEmpty)
                #expect(try await client.account!.api.bindings(client.account!.session!).isEmpty)
                let afterUnbind = await #expect(throws: TetherError.self) { try await device.write(["LightSwitch": false]) }
                #expect(afterUnbind?.code == .notControllable)
            }
        }
    }

    @Test("two devices written through the cloud at once with the same sn each get their own answer")
    func sameSNOnTwoDevices() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let first = try await Lamp(cloud, product: product)
            let second = try await Lamp(cloud, product: product)
            let links = [Task { await first.link.run() }, Task { await second.link.run() }]
            defer { links.forEach { $0.cancel() } }
            try await withTetherClient(configuration: Self.configuration(cloud, products: [first.model]), logger: GatewayFixtures.quietLogger) { client in
                try await client.account!.register(username: "twolamps", password: "Passw0rd!")
                let a = try await client.bind(did: first.created.did, passcode: first.created.passcode)
                let b = try await client.bind(did: second.created.did, passcode: second.created.passcode)
                try await Self.waitUntilOnline(client, a, b)
                try await a.subscribe()
                try await b.subscribe()
                for round in 1...5 {
                    async let left = a.write(["Brightness": .int(Int64(round))], sn: 1)
                    async let right = b.write(["Brightness": .int(Int64(90 + round))], sn: 1)
                    let (l, r) = try await (left, right)
                    #expect(l.status?.data["Brightness"] == .int(Int64(round)))
                    #expect(r.status?.data["Brightness"] == .int(Int64(90 + round)))
                }
                #expect(first.virtual.status.data["Brightness"] == .int(5))
                #expect(second.virtual.status.data["Brightness"] == .int(95))
            }
        }
    }

    @Test("300 writes through the cloud, some changing nothing, each acknowledged with the report that answers it")
    func manyWrites() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await Lamp(cloud, product: product)
            let linked = Task { await lamp.link.run() }
            defer { linked.cancel() }
            try await withTetherClient(configuration: Self.configuration(cloud, products: [lamp.model]), logger: GatewayFixtures.quietLogger) { client in
                try await client.account!.register(username: "busy", password: "Passw0rd!")
                let device = try await client.bind(did: lamp.created.did, passcode: lamp.created.passcode)
                try await Self.waitUntilOnline(client, device)
                try await device.subscribe()
                // The device may report before it replies; every second write repeats the value.
                for index in 0..<300 {
                    let value = DataValue.int(Int64(index / 2 % 100))
                    let result = try await device.write(["Brightness": value])
                    #expect(result.status?.data["Brightness"] == value, "write \(index)")
                }
            }
        }
    }

    @Test("a device subscribed on the LAN before the user logs in gets the cloud path once bound")
    func boundAfterSubscribing() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await Lamp(cloud, product: product)
            let linked = Task { await lamp.link.run() }
            defer { linked.cancel() }
            let server = lamp.lanServer()
            let serving = Task { try await server.run() }
            let addresses = try await server.addresses()
            // No model configured and nobody logged in: the LAN device's model still comes from the cloud.
            try await withTetherClient(configuration: Self.configuration(cloud, products: [], discovery: addresses), logger: GatewayFixtures.quietLogger) { client in
                let device = try #require(await SDKDeviceListTests.list(client) { !$0.isEmpty }).first!
                try await device.subscribe(passcode: lamp.created.passcode)
                #expect(try await device.getStatus().data["Brightness"] != nil)
                #expect(device.controlPath == .lan && !device.isBound)
                try await client.account!.register(username: "latecomer", password: "Passw0rd!")
                _ = try await client.bind(did: lamp.created.did, passcode: lamp.created.passcode)
                try await Self.waitUntilOnline(client, device)
                serving.cancel()
                _ = try? await serving.value
                try await GatewayFixtures.waitUntil(timeout: .seconds(10), "the device is controlled through the cloud") { device.controlPath == .cloud }
                #expect(try await device.write(["Brightness": 77]).status?.data["Brightness"] == .int(77))
            }
        }
    }

    @Test("an event the device posts reaches the subscribed app as a model event")
    func modelEvent() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let created = try await GatewayFixtures.device(cloud, product: product)
            try await withTetherClient(configuration: Self.configuration(cloud, products: []), logger: GatewayFixtures.quietLogger) { client in
                try await client.account!.register(username: "alarmed", password: "Passw0rd!")
                let device = try await client.bind(did: created.did, passcode: created.passcode)
                try await GatewayFixtures.withDevice(cloud, created) { lamp in
                    try await Self.waitUntilOnline(client, device)
                    try await device.subscribe()
                    let events = device.events()
                    #expect(try await lamp.postEvent("Overheat", value: ["Temperature": .double(97.5)]).isSuccess)
                    var received: DeviceModelEvent?
                    for await event in events {
                        if case .modelEvent(let posted) = event { received = posted; break }
                    }
                    #expect(received?.identifier == "Overheat")
                    #expect(received?.type == "alert")
                    #expect(received?.values["Temperature"]?.numberValue == 97.5)
                }
            }
        }
    }

    @Test("the SDK publishes to a device's custom topic, hears what it publishes, and reads and writes its shadow")
    func customTopicsAndShadow() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let created = try await GatewayFixtures.device(cloud, product: product)
            let base = "/\(created.productKey)/\(created.deviceName)/user"
            try await withTetherClient(configuration: Self.configuration(cloud, products: []), logger: GatewayFixtures.quietLogger) { client in
                try await client.account!.register(username: "topical", password: "Passw0rd!")
                let device = try await client.bind(did: created.did, passcode: created.passcode)
                try await GatewayFixtures.withDevice(cloud, created) { lamp in
                    try await Self.waitUntilOnline(client, device)
                    try await device.subscribe()
                    let events = device.events()
                    try await lamp.mqtt.publish(MQTTMessage(topic: base + "/update", payload: ByteBuffer(string: "hello app"), qos: .atLeastOnce))
                    var heard: DeviceTopicMessage?
                    for await event in events {
                        if case .topicMessage(let message) = event { heard = message; break }
                    }
                    #expect(heard == DeviceTopicMessage(topic: base + "/update", payload: Array("hello app".utf8)))

                    let downlinks = lamp.mqtt.messages()
                    _ = try await lamp.mqtt.subscribe([MQTTTopicSubscription(filter: base + "/get", qos: .atLeastOnce)])
                    try await device.publish(topic: base + "/get", payload: Array("hello device".utf8), qos: 1)
                    for await message in downlinks where message.topic == base + "/get" {
                        #expect(String(buffer: message.payload) == "hello device")
                        break
                    }
                    do {
                        try await device.publish(topic: base + "/update", payload: [1])
                        Issue.record("a publication to a pub class was accepted")
                    } catch let error as TetherError {
                        #expect(error.cloudCode == 9015)
                    }

                    #expect(try await lamp.shadow(.update(ShadowUpdate(reported: .merged(["mode": "eco"]), version: 1))) == .accepted(version: 1))
                    let shadow = try await device.shadow()
                    #expect(shadow.reported == ["mode": "eco"] && shadow.version == 1)
                    #expect(try await device.updateShadow(desired: ["mode": "boost"], version: 2).desired == ["mode": "boost"])
                    do {
                        _ = try await device.updateShadow(desired: ["mode": "off"], version: 2)
                        Issue.record("a stale shadow version was accepted")
                    } catch let error as TetherError {
                        #expect(error.cloudCode == 9501)
                    }
                    #expect(try await device.clearDesiredShadow(version: 3).desired.isEmpty)
                }
            }
        }
    }

    @Test("two users see only their own devices")
    func isolation() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let mine = try await Lamp(cloud, product: product)
            let theirs = try await Lamp(cloud, product: product)
            try await withTetherClient(configuration: Self.configuration(cloud, products: [mine.model]), logger: GatewayFixtures.quietLogger) { alice in
                try await withTetherClient(configuration: Self.configuration(cloud, products: [mine.model]), logger: GatewayFixtures.quietLogger) { bob in
                    try await alice.account!.register(username: "alice", password: "Passw0rd!")
                    try await bob.account!.register(username: "bob", password: "Passw0rd!")
                    try await alice.bind(did: mine.created.did, passcode: mine.created.passcode)
                    try await bob.bind(did: theirs.created.did, passcode: theirs.created.passcode)
                    let wrong = await #expect(throws: TetherError.self) { try await bob.bind(did: mine.created.did, passcode: "WRONGWRONG") }
                    #expect(wrong != nil)
                    #expect(alice.devices.map(\.did) == [mine.created.did])
                    #expect(bob.devices.map(\.did) == [theirs.created.did])
                    #expect(try await bob.refreshBindings().map(\.did) == [theirs.created.did])
                }
            }
        }
    }
}

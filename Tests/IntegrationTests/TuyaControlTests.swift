import Logging
import NIOCore
import NIOPosix
import Testing
import Tether
import TetherAgent
import TetherTestSupport

/// Tuya devices through the SDK's `Device`, against the agent's Tuya device on loopback, every
/// version: status, writes by name, pushes, reconnection, wrong keys.
@Suite("Tuya control: SDK ↔ agent on loopback", .timeLimit(.minutes(1)))
struct TuyaControlTests {
    static let key = "thisisarealkey00"
    static let id = "eb0123456789abcdefghij"

    static func configuration(_ model: ThingModel) -> TetherClient.Configuration {
        TetherClient.Configuration(
            products: [model],
            lan: LANConfiguration(discoveryEnabled: false, reconnect: ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))),
            tuya: TuyaConfiguration(heartbeatInterval: .milliseconds(300), requestTimeout: .seconds(1)))
    }

    /// Runs a Tuya pet house on loopback (`port` 0: any) until `body` returns; announcing itself to
    /// `announceTo` when given.
    static func withTuyaDevice<T: Sendable>(
        _ version: TuyaVersion, device: VirtualDevice? = nil, port: Int = 0, announceTo: Int? = nil, faults: TuyaFaults = TuyaFaults(),
        _ body: (TuyaDeviceServer, Int) async throws -> T
    ) async throws -> T {
        let model = try Fixtures.petHouse()
        let device =
            try device
            ?? VirtualDevice(model: model, identity: DeviceIdentity(did: id, mac: [2, 0, 0, 0, 0, 9], passcode: "ABCDEFGHIJ", productKey: model.productKey))
        let configuration = try TuyaDeviceConfiguration(
            host: "127.0.0.1", port: port, deviceID: id, localKey: Array(key.utf8), version: version,
            announcementTarget: .some(announceTo.map { ("127.0.0.1", $0) }), announcementInterval: .milliseconds(200), productKey: "keydeadbeef12345",
            probePort: nil)
        var withFaults = configuration
        withFaults.faults = faults
        // Coming back on a given port: while the tests run side by side, another socket may hold
        // that port for a moment (as an ephemeral port), so binding is tried again for a while.
        for attempt in 0..<50 {
            let server = TuyaDeviceServer(device: device, configuration: withFaults, logger: Logger(label: "test.tuya"))
            let outcome: T? = try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try? await server.run()
                    return nil
                }
                let bound: Int
                do {
                    bound = try await server.port()
                } catch let error as TetherError where error.code == .bindFailed && port != 0 && attempt < 49 {
                    group.cancelAll()
                    while try await group.next() != nil {}
                    return nil
                }
                let result = try await body(server, bound)
                group.cancelAll()
                while try await group.next() != nil {}
                return result
            }
            if let outcome { return outcome }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TetherError(.bindFailed, "127.0.0.1 TCP \(port) stayed taken")
    }

    @Test("subscribe, status, write by name, pushes of the device's own changes", arguments: [TuyaVersion.v31, .v33, .v34, .v35])
    func control(version: TuyaVersion) async throws {
        let model = try Fixtures.petHouse()
        try await Self.withTuyaDevice(version) { server, port in
            server.device.update(Fixtures.petHouseState)
            try await withTetherClient(configuration: Self.configuration(model)) { client in
                let device = try client.tuyaDevice(host: "127.0.0.1", port: port, id: Self.id, localKey: TuyaLocalKey(Self.key), version: version)
                #expect(device.lanProtocol == .tuya && device.did == Self.id && device.model?.productKey == model.productKey)
                #expect(client.devices.contains(device))
                try await device.subscribe()
                #expect(device.netStatus == .controllable)
                #expect(device.status.data["LED_R"] == .int(10) && device.status.data["Temperature"] == .int(25))

                let result = try await device.write(["LED_OnOff": false, "LED_R": 200], sn: 7)
                #expect(result.sn == 7)
                #expect(result.status?.data["LED_R"] == .int(200))
                #expect(server.device.status.allValues["LED_OnOff"] == .bool(false) && server.device.status.allValues["LED_R"] == .int(200))

                // The device changes on its own: the push arrives as an event.
                let events = device.events()
                server.device.update(["Temperature": .int(31)])
                let pushed = await next(events) { if case .status(let report) = $0 { report.status.data["Temperature"] == .int(31) } else { false } }
                #expect(pushed != nil)

                let read = try await device.getStatus()
                #expect(read.data["Temperature"] == .int(31) && read.data["LED_R"] == .int(200))

                // The model still checks what is written.
                await #expect(throws: TetherError.self) { try await device.write(["LED_R": 9999]) }
                await #expect(throws: TetherError.self) { try await device.write(["No_Such_Point": true]) }
            }
        }
    }

    @Test("the device goes away and comes back on the same port: the subscription reconnects on its own")
    func reconnects() async throws {
        let model = try Fixtures.petHouse()
        let virtual = try VirtualDevice(
            model: model, identity: DeviceIdentity(did: Self.id, mac: [2, 0, 0, 0, 0, 9], passcode: "ABCDEFGHIJ", productKey: model.productKey))
        try await withTetherClient(configuration: Self.configuration(model)) { client in
            let port = try await Self.withTuyaDevice(.v35, device: virtual) { _, port in
                let device = try client.tuyaDevice(host: "127.0.0.1", port: port, id: Self.id, localKey: TuyaLocalKey(Self.key), version: .v35)
                try await device.subscribe()
                #expect(device.netStatus == .controllable)
                return port
            }
            let device = try #require(client.device(did: Self.id))
            #expect(await eventually { device.netStatus != .controllable })
            await #expect(throws: TetherError.self) { try await device.write(["LED_OnOff": true]) }
            try await Self.withTuyaDevice(.v35, device: virtual, port: port) { server, _ in
                #expect(await eventually { device.netStatus == .controllable })
                try await device.write(["LED_OnOff": true])
                #expect(server.device.status.allValues["LED_OnOff"] == .bool(true))
            }
        }
    }

    @Test("the device goes dark for a while (the simulator's fault): heartbeats notice, the SDK reconnects when it answers again")
    func outage() async throws {
        let model = try Fixtures.petHouse()
        try await Self.withTuyaDevice(.v34, faults: TuyaFaults(goDarkAfter: 6, darkFor: .milliseconds(1500))) { server, port in
            try await withTetherClient(configuration: Self.configuration(model)) { client in
                let device = try client.tuyaDevice(host: "127.0.0.1", port: port, id: Self.id, localKey: TuyaLocalKey(Self.key), version: .v34)
                let events = device.events()
                try await device.subscribe()
                let lost = await next(events, timeout: .seconds(10)) { $0 == .netStatus(.online) }
                #expect(lost != nil)
                let back = await next(events, timeout: .seconds(10)) { $0 == .netStatus(.controllable) }
                #expect(back != nil)
                try await device.write(["LED_G": 77])
                #expect(server.device.status.allValues["LED_G"] == .int(77))
            }
        }
    }

    @Test("the agent's device serves one client at a time: another client waits, the SDK's connection is not disturbed")
    func oneConnection() async throws {
        let model = try Fixtures.petHouse()
        try await Self.withTuyaDevice(.v33) { server, port in
            try await withTetherClient(configuration: Self.configuration(model)) { client in
                let device = try client.tuyaDevice(host: "127.0.0.1", port: port, id: Self.id, localKey: TuyaLocalKey(Self.key), version: .v33)
                try await device.subscribe()
                let other = try TuyaDeviceAddress(host: "127.0.0.1", port: port, deviceID: Self.id, localKey: Array(Self.key.utf8), version: .v33)
                let error = await #expect(throws: TetherError.self) {
                    try await TuyaLANClient.withConnection(to: other, timeout: .milliseconds(500)) { session throws(TetherError) in try await session.status() }
                }
                #expect(error?.code == .timeout)
                try await device.write(["LED_R": 42])
                #expect(server.device.status.allValues["LED_R"] == .int(42))
                #expect(device.netStatus == .controllable)
            }
        }
    }

    @Test("a wrong local key: a typed error from subscribe, on every version")
    func wrongKey() async throws {
        let model = try Fixtures.petHouse()
        for version in [TuyaVersion.v31, .v33, .v34, .v35] {
            try await Self.withTuyaDevice(version) { _, port in
                try await withTetherClient(configuration: Self.configuration(model)) { client in
                    let device = try client.tuyaDevice(
                        host: "127.0.0.1", port: port, id: Self.id, localKey: TuyaLocalKey("anotherlocalkey0"), version: version)
                    if version == .v31 {
                        // 3.1 reads travel in clear: only the write, sealed and signed with the key, is refused.
                        try await device.subscribe()
                        await #expect(throws: TetherError.self) { try await device.write(["LED_OnOff": true]) }
                        return
                    }
                    let error = await #expect(throws: TetherError.self) { try await device.subscribe() }
                    // 3.4/3.5 prove the key in the negotiation; 3.1 and 3.3 devices do not answer frames they cannot open.
                    let expected: Set<TetherError.Code> =
                        version.negotiatesSessionKey ? [.sessionNegotiationFailed] : [.timeout, .connectionClosed, .unexpectedResponse]
                    #expect(error.map { expected.contains($0.code) } == true, "\(version): \(String(describing: error))")
                    #expect(!device.isSubscribed)
                }
            }
        }
    }

    @Test("devices heard announcing themselves join the list; with a local key from the configuration they are controlled like the rest")
    func announcements() async throws {
        var model = try Fixtures.petHouse()
        model.productKey = "keydeadbeef12345"
        // A port no other test uses: announcements go to a fixed address, as on a LAN.
        let udp = freeUDPPort()
        try await Self.withTuyaDevice(.v33, announceTo: udp) { server, port in
            var configuration = Self.configuration(model)
            configuration.tuya.listensForAnnouncements = true
            configuration.tuya.announcementHost = "127.0.0.1"
            configuration.tuya.announcementPorts = [udp]
            configuration.tuya.tcpPort = port
            configuration.tuya.presenceTimeout = .seconds(1)
            configuration.tuya.localKeys = [Self.id: try TuyaLocalKey(Self.key)]
            try await withTetherClient(configuration: configuration) { client in
                let list = await next(client.deviceListUpdates()) { !$0.isEmpty }
                let device = try #require(list?.first)
                #expect(device.lanProtocol == .tuya && device.id == Self.id && device.tuyaVersion == .v33)
                #expect(device.productKey == "keydeadbeef12345" && device.model != nil)
                #expect(device.lanEndpoint == LANEndpoint(host: "127.0.0.1", port: port))
                try await device.subscribe()
                try await device.write(["LED_Color": 3])
                #expect(server.device.status.allValues["LED_Color"] == .int(3))
                // Heard again and again: still one device.
                try await Task.sleep(for: .milliseconds(600))
                #expect(client.devices.count == 1)
            }
        }
    }

    @Test("what the app says wins over announcements; a forged announcement cannot change a version the app gave")
    func appWins() async throws {
        let model = try Fixtures.petHouse()
        let udp = freeUDPPort()
        try await Self.withTuyaDevice(.v35, announceTo: udp) { server, port in
            var configuration = Self.configuration(model)
            configuration.products = []
            configuration.tuya.listensForAnnouncements = true
            configuration.tuya.announcementHost = "127.0.0.1"
            configuration.tuya.announcementPorts = [udp]
            configuration.tuya.tcpPort = port
            try await withTetherClient(configuration: configuration) { client in
                let heard = try #require(await next(client.deviceListUpdates()) { !$0.isEmpty }?.first)
                #expect(heard.tuyaVersion == .v35 && heard.model == nil)
                let device = try client.tuyaDevice(host: "127.0.0.1", port: port, id: Self.id, localKey: TuyaLocalKey(Self.key), version: .v35, model: model)
                #expect(device === heard && device.model?.productKey == model.productKey)
                // Someone on the LAN announces the device as 3.1 at another address.
                let forged = try TuyaDiscovery.datagram(
                    TuyaAnnouncement(ip: "127.0.0.9", deviceID: Self.id, productKey: "keydeadbeef12345", version: "3.1"), version: .v33)
                try await Self.sendUDP(forged, to: udp)
                try await Task.sleep(for: .milliseconds(300))
                #expect(device.tuyaVersion == .v35 && device.lanEndpoint == LANEndpoint(host: "127.0.0.1", port: port))
                try await device.subscribe()
                try await device.write(["LED_OnOff": true])
                #expect(server.device.status.allValues["LED_OnOff"] == .bool(true))
            }
        }
    }

    static func sendUDP(_ bytes: [UInt8], to port: Int) async throws {
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: try SocketAddress(ipAddress: "127.0.0.1", port: port), data: ByteBuffer(bytes: bytes)))
        try await channel.close()
    }

    @Test("a Tuya local key is never shown")
    func keyRedacted() throws {
        let key = try TuyaLocalKey(Self.key)
        #expect(!"\(key)".contains(Self.key) && !String(reflecting: key).contains(Self.key))
        var dumped = ""
        dump(try TuyaDeviceAddress(host: "127.0.0.1", deviceID: Self.id, localKey: key.bytes, version: .v33), to: &dumped)
        #expect(!dumped.contains(Self.key) && !dumped.contains("116, 104, 105"))
        #expect(throws: TetherError.self) { try TuyaLocalKey("short") }
    }
}

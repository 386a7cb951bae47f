import Testing
import Tether
import TetherAgent
import TetherTestSupport

/// The SDK against the device agent, over real sockets on loopback.
@Suite("LAN control: SDK ↔ agent on loopback", .timeLimit(.minutes(1)))
struct LANControlTests {
    static func lan(_ addresses: LANDeviceAddresses, discovery: Bool = true) -> LANConfiguration {
        LANConfiguration(
            discoveryEnabled: discovery,
            discoveryTargets: [LANEndpoint(host: addresses.host, port: addresses.udpPort)],
            discoveryInterval: .milliseconds(200),
            presenceTimeout: .seconds(1),
            tcpPort: addresses.tcpPort,
            connectTimeout: .seconds(2),
            requestTimeout: .seconds(2),
            heartbeatInterval: .milliseconds(300),
            heartbeatTimeout: .seconds(1),
            reconnect: ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        )
    }

    /// A virtual pet house on loopback and an SDK client that has subscribed to it.
    func withSubscribedPetHouse(_ body: (LANDeviceServer, Device) async throws -> Void) async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses, discovery: false))) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                try await device.subscribe()
                try await body(server, device)
            }
        }
    }

    @Test("discovery finds the device by unicast, with its did, MAC and product key")
    func discovers() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses))) { client in
                let list = await next(client.deviceListUpdates()) { !$0.isEmpty }
                let device = try #require(list?.first)
                #expect(device.did == server.device.identity.did)
                #expect(device.mac == server.device.identity.macString)
                #expect(device.productKey == model.productKey)
                #expect(device.netStatus == .online)
                #expect(device.lanEndpoint == LANEndpoint(host: "127.0.0.1", port: addresses.tcpPort))
                // Later discovery rounds keep the same object.
                try await Task.sleep(for: .milliseconds(500))
                #expect(client.devices.count == 1 && client.devices[0] === device)
            }
        }
    }

    @Test("subscribe takes the passcode in the binding window, logs in and reads the status")
    func subscribes() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            server.device.update(Fixtures.petHouseState)
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses, discovery: false))) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                try await device.subscribe()
                #expect(device.netStatus == .controllable)
                #expect(device.status == DeviceStatus(values: Fixtures.petHouseState, model: model))
            }
        }
    }

    @Test("write with sn is answered by the acknowledgement with the same sn, and the device obeys")
    func writesWithSN() async throws {
        try await withSubscribedPetHouse { server, device in
        let events = device.events()
        let result = try await device.write(["LED_OnOff": .bool(true), "LED_Color": .string("Pink"), "Motor_Speed": .int(-3)], sn: 5)
        #expect(result.sn == 5)
        #expect(result.status?.data["LED_Color"] == .int(3))
        #expect(server.device.status.data["Motor_Speed"] == .int(-3))
        #expect(server.device.status.data["LED_OnOff"] == .bool(true))
        let acknowledged = await next(events) { event in
            if case .status(let report) = event { return report.sn == 5 }
            return false
        }
        #expect(acknowledged != nil)
        // The client chooses an sn when none is given.
        let chosen = try await device.write(["LED_R": .int(77)])
        #expect(chosen.sn != 0 && chosen.sn != 5)
        #expect(device.status.data["LED_R"] == .int(77))
        }
    }

    @Test("invalid writes fail before anything is sent")
    func invalidWrites() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses, discovery: false))) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                await #expect { try await device.write(["LED_R": .int(1)]) } throws: { ($0 as? TetherError)?.code == .notControllable }
                try await device.subscribe()
                await #expect { try await device.write(["Humidity": .int(1)]) } throws: { ($0 as? TetherError)?.code == .readOnlyDataPoint }
                await #expect { try await device.write(["LED_R": .int(300)]) } throws: { ($0 as? TetherError)?.code == .valueOutOfRange }
                #expect(server.device.status.data["LED_R"] == .int(0))
            }
        }
    }

    @Test("status changes on the device are pushed to the subscribed app")
    func statusPush() async throws {
        try await withSubscribedPetHouse { server, device in
        let events = device.events()
        server.device.update(["Temperature": .int(31), "Alert_1": .bool(true), "Fault_IR": .bool(true)])
        let pushed = await next(events) { event in
            if case .status(let report) = event { return report.sn == 0 && report.status.data["Temperature"] == .int(31) }
            return false
        }
        guard case .status(let report)? = pushed else { Issue.record("no report"); return }
        #expect(report.status.alerts["Alert_1"] == .bool(true))
        #expect(report.status.faults["Fault_IR"] == .bool(true))
        #expect(device.status.data["Temperature"] == .int(31))
        }
    }

    @Test("getStatus, hardware info (without subscribing) and transparent data")
    func readsAndBinary() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses, discovery: false))) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                let info = try await device.hardwareInfo()
                #expect(info.productKey == model.productKey)
                #expect(!device.isSubscribed)
                try await device.subscribe()
                server.device.update(["Humidity": .int(42)])
                #expect(try await device.getStatus().data["Humidity"] == .int(42))
                let events = device.events()
                try await device.sendBinary([0xDE, 0xAD])
                let echoed = await next(events) { event in event == .binary([0xDE, 0xAD]) }
                #expect(echoed != nil)
            }
        }
    }

    @Test("a wrong passcode is refused, and no passcode outside the binding window is refused")
    func refusals() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model, bindable: false) { server, addresses in
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses, discovery: false))) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                await #expect { try await device.subscribe() } throws: { ($0 as? TetherError)?.code == .notInBindingWindow }
                #expect(!device.isSubscribed)
                await #expect { try await device.subscribe(passcode: "WRONGWRONG") } throws: { ($0 as? TetherError)?.code == .loginFailed }
                #expect(device.netStatus == .online)
                try await device.subscribe(passcode: server.device.identity.passcode)
                #expect(device.netStatus == .controllable)
            }
        }
    }

    @Test("the device serves 8 clients and refuses the 9th")
    func ninthClient() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            var clients: [GizwitsLANClient] = []
            for _ in 0..<8 {
                let connection = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort)
                _ = try await connection.request(.hardwareInfoRequest)
                clients.append(connection)
            }
            #expect(server.clientCount == 8)
            try await withTetherClient(configuration: .init(products: [model], lan: Self.lan(addresses, discovery: false))) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                await #expect { try await device.subscribe() } throws: { ($0 as? TetherError)?.code == .loginFailed }
                await clients.removeFirst().close()
                #expect(await eventually { server.clientCount == 7 })
                try await device.subscribe()
                #expect(device.netStatus == .controllable)
            }
            for connection in clients { await connection.close() }
        }
    }

    @Test("when the link drops the client reconnects and reads the status again")
    func reconnects() async throws {
        try await withSubscribedPetHouse { server, device in
        let events = device.events()
        server.device.isMuted = true          // no push reaches the app while it is down…
        server.dropConnections()
        server.device.update(["Humidity": .int(99)])
        server.device.isMuted = false
        let resynced = await next(events, timeout: .seconds(10)) { event in
            if case .status(let report) = event { return report.status.data["Humidity"] == .int(99) }
            return false
        }
        #expect(resynced != nil, "the status changed while disconnected was read after reconnecting")
        #expect(await eventually { device.netStatus == .controllable })
        try await device.write(["LED_G": .int(9)], sn: 9)
        #expect(server.device.status.data["LED_G"] == .int(9))
        }
    }

    @Test("a device that stops answering is detected by the heartbeat, and found again when it answers")
    func heartbeatTimeout() async throws {
        try await withSubscribedPetHouse { server, device in
        let events = device.events()
        server.device.isMuted = true
        let lost = await next(events) { $0 == .netStatus(.online) }
        #expect(lost != nil, "heartbeat timeout took the device out of controllable")
        server.device.isMuted = false
        #expect(await eventually(timeout: .seconds(10)) { device.netStatus == .controllable })
        }
    }

    @Test("a request on a connection that is gone fails at once instead of waiting forever")
    func requestAfterClose() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { _, addresses in
            let connection = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort, configuration: .init(requestTimeout: .seconds(30)))
            await connection.close()
            let started = ContinuousClock.now
            await #expect { _ = try await connection.request(.heartbeat) } throws: { ($0 as? TetherError)?.code == .connectionClosed }
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }

    @Test("discovery keeps working when one of its targets cannot be sent to")
    func discoveryWithAFailingTarget() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            // Sending to port 0 fails (EINVAL), which closes that target's socket, not the others.
            let targets = [LANEndpoint(host: "127.0.0.1", port: 0), LANEndpoint(host: addresses.host, port: addresses.udpPort)]
            let found = try await GizwitsLANDiscovery.discover(targets: targets, timeout: .seconds(1))
            #expect(found.map(\.info.did) == [server.device.identity.did])
        }
    }

    @Test("a device added by address stays online while discovery runs")
    func manualDeviceStaysOnline() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { _, addresses in
            var lan = Self.lan(addresses)
            lan.discoveryTargets = [LANEndpoint(host: "127.0.0.1", port: 9)]
            try await withTetherClient(configuration: .init(products: [model], lan: lan)) { client in
                let device = client.device(host: addresses.host, port: addresses.tcpPort)
                try await Task.sleep(for: .milliseconds(1500))
                #expect(device.netStatus == .online)
            }
        }
    }

    @Test("the device drops a client that stays silent past the idle timeout, not one that talks")
    func idleTimeout() async throws {
        let model = try Fixtures.petHouse()
        // 15 chatter intervals per idle timeout: a loaded CI machine once starved the talker for 600 ms.
        try await withVirtualDevice(model: model, idleTimeout: .milliseconds(1500)) { server, addresses in
            let silent = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort)
            let talking = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort)
            let chatter = Task {
                while !Task.isCancelled {
                    try? await talking.send(.hardwareInfoRequest)
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(await eventually { !silent.isActive }, "closed by the device after 1.5 s of silence")
            #expect(talking.isActive, "a client that sends keeps its connection")
            chatter.cancel()
            #expect(await eventually { !talking.isActive }, "and loses it once it falls silent")
            #expect(await eventually { server.clientCount == 0 })
        }
    }

    @Test("commands other than passcode, login, hotspots, hardware info and production test close the socket before login")
    func authorizationGate() async throws {
        let model = try Fixtures.petHouse()
        try await withVirtualDevice(model: model) { server, addresses in
            let connection = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort)
            // A control (LED_R = 200) before login: the device must close the socket and ignore it.
            let control = try server.device.codec.encode(.control(["LED_R": .int(200)]))
            await #expect { _ = try await connection.request(.p0WithAck(sn: 1, p0: control)) } throws: { ($0 as? TetherError)?.code == .connectionClosed }
            #expect(await eventually { !connection.isActive })
            #expect(server.device.status.data["LED_R"] == .int(0))
            let second = try await GizwitsLANClient.connect(host: addresses.host, port: addresses.tcpPort)
            guard case .hotspotList(let hotspots) = try await second.request(.hotspotListRequest) else {
                Issue.record("no hotspot list"); return
            }
            #expect(!hotspots.isEmpty)
            #expect(await eventually { !second.isActive }, "GAgent closes the socket after the hotspot list")
        }
    }
}

import TetherAgent
import TetherBluetooth
import TetherCore
import TetherTesting
import Testing

/// The LW003-V3 client (`LW003Device`) against the agent's simulator on the in-process radio of
/// `TetherTesting`: what an app's own tests would do, without an adapter or a bus.
@Suite("Simulated Bluetooth: LW003Device against LW003Simulator")
struct SimulatedBluetoothTests {
    static let address = "C8:47:8C:12:34:56"

    /// Runs `body` with a central and a served simulator.
    static func withLW003(
        _ configure: (inout LW003Simulator.Configuration) -> Void = { _ in },
        _ body: @escaping @Sendable (SimulatedBluetooth, SimulatedBluetoothCentral) async throws -> Void
    ) async throws {
        var configuration = LW003Simulator.Configuration()
        configuration.password = "Tether42"
        configuration.records = 37
        configuration.framePacing = .milliseconds(1)
        configuration.logInterval = .milliseconds(20)
        configure(&configuration)
        let simulator = try LW003Simulator(configuration: configuration)
        let radio = SimulatedBluetooth()
        let peripheral = radio.addPeripheral(identifier: address, definition: try simulator.definition, handler: simulator)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await simulator.serve(peripheral) }
            defer { group.cancelAll() }
            try await body(radio, radio.central)
        }
    }

    @Test("a scan finds it and decodes its advertisement; a service filter for another profile does not")
    func scan() async throws {
        try await Self.withLW003 { _, central in
            var found: BluetoothPeripheral?
            for try await peripheral in try await central.scan(BluetoothScanOptions(services: [LW003GATT.advertisedService])) {
                found = peripheral
                break
            }
            let advertisement = try #require(found.flatMap { LW003Advertisement($0.advertisement) })
            #expect(advertisement.passwordRequired && advertisement.mac == Self.address && advertisement.batteryPercent == 100)
            let stream = try await central.scan(BluetoothScanOptions(services: [BluetoothUUID(0xC000)]))
            let other = await within(.milliseconds(100)) { () async -> BluetoothPeripheral? in
                do {
                    for try await peripheral in stream { return peripheral }
                } catch {}
                return nil
            }
            #expect(other == nil)
        }
    }

    @Test("logged in, it uploads every record once, oldest first, and the count matches its summary")
    func records() async throws {
        try await Self.withLW003 { _, central in
            try await central.withConnection(to: Self.address) { link in
                try await LW003Device.withDevice(on: link, password: "Tether42") { device in
                    var records: [LW003BeaconRecord] = []
                    for try await record in try await device.records() { records.append(record) }
                    #expect(records.count == 37)
                    #expect(Set(records.map(\.type)) == Set(LW003BeaconType.allCases))
                    #expect(records.map(\.scanTime) == records.map(\.scanTime).sorted())
                    let millivolts = try await device.read(.batteryVoltage).batteryMillivolts()
                    #expect(millivolts == 4200)
                    #expect(try await device.deviceInformation().model == "LW003-B")
                }
            }
        }
    }

    @Test("a wrong password is loginFailed; without a login the device answers no command")
    func wrongPassword() async throws {
        try await Self.withLW003 { _, central in
            try await central.withConnection(to: Self.address) { link in
                let error = await #expect(throws: TetherError.self) {
                    try await LW003Device.withDevice(on: link, password: "Wrong123") { _ in }
                }
                #expect(error?.code == .loginFailed)
                let silent = await #expect(throws: TetherError.self) {
                    try await LW003Device.withDevice(on: link, password: nil, timeout: .milliseconds(200)) { device in
                        _ = try await device.read(.batteryVoltage)
                    }
                }
                #expect(silent?.code == .timeout)
            }
        }
    }

    @Test("a known peripheral is retrieved without scanning, an unknown one is not; a link has the peripheral's RSSI until it ends")
    func retrieveAndRSSI() async throws {
        try await Self.withLW003 { radio, central in
            let known = try await central.knownPeripherals(["AA:BB:CC:DD:EE:FF", Self.address])
            #expect(known.map(\.identifier) == [Self.address])
            #expect(try await central.knownPeripheral(Self.address)?.name != nil)
            try await central.withConnection(to: Self.address) { link in
                #expect(try await link.rssi() == -50)
                await radio.setState(.poweredOff)
                _ = try await link.disconnection()
                let error = await #expect(throws: TetherError.self) { try await link.rssi() }
                #expect(error?.code == .peripheralDisconnected)
            }
        }
    }

    @Test("power off: the device says why (reason 03) and drops the link, which ends as the device's doing")
    func powerOff() async throws {
        try await Self.withLW003 { _, central in
            try await central.withConnection(to: Self.address) { link in
                try await LW003Device.withDevice(on: link, password: "Tether42") { device in
                    try await device.write(.powerOff)
                    #expect(try await link.disconnection() == .byDevice)
                    #expect(device.disconnectReason == .shutDown)
                }
            }
        }
    }

    @Test("garbage in the storage stream is a malformed frame, not a lost or invented record")
    func garbage() async throws {
        try await Self.withLW003({ $0.faults.garbageFrames = true }) { _, central in
            try await central.withConnection(to: Self.address) { link in
                try await LW003Device.withDevice(on: link, password: "Tether42") { device in
                    let error = await #expect(throws: TetherError.self) {
                        for try await _ in try await device.records() {}
                    }
                    #expect(error?.code == .malformedFrame)
                }
            }
        }
    }

    @Test("an upload the device pauses without a summary ends in a timeout after the records that came, none invented")
    func pausedUpload() async throws {
        try await Self.withLW003({ $0.framePacing = .milliseconds(150) }) { _, central in
            try await central.withConnection(to: Self.address) { link in
                try await LW003Device.withDevice(on: link, password: "Tether42") { device in
                    var received: [LW003BeaconRecord] = []
                    let error = await #expect(throws: TetherError.self) {
                        for try await record in try await device.records(idleTimeout: .seconds(1)) {
                            received.append(record)
                            if received.count == 3 { try await device.write(.pauseStorageUpload, value: [0]) }
                        }
                    }
                    #expect(error?.code == .timeout)
                    #expect(received.count >= 3 && received.count < 37)
                    #expect(received.map(\.scanTime) == received.map(\.scanTime).sorted())
                }
            }
        }
    }

    @Test("the log arrives as lines; a radio switched off ends the link as lost")
    func logAndPowerLoss() async throws {
        try await Self.withLW003 { radio, central in
            try await central.withConnection(to: Self.address) { link in
                try await LW003Device.withDevice(on: link, password: "Tether42") { device in
                    var lines: [String] = []
                    for await line in try await device.log() {
                        lines.append(line)
                        if lines.count == 2 { break }
                    }
                    #expect(lines.allSatisfy { $0.contains("battery=") })
                    await radio.setState(.poweredOff)
                    #expect(try await link.disconnection() == .linkLost)
                }
            }
        }
    }
}

/// The DIoT client against the agent's DIoT simulator on the in-process radio.
@Suite("Simulated Bluetooth: DIoTDevice against DIoTSimulator")
struct SimulatedDIoTTests {
    @Test("features, a set confirmed and fetched back, the channel map, and live data at the channel's rate")
    func tables() async throws {
        var configuration = DIoTSimulator.Configuration()
        configuration.tick = .milliseconds(10)
        let simulator = DIoTSimulator(configuration: configuration)
        let radio = SimulatedBluetooth()
        let peripheral = radio.addPeripheral(identifier: "00:11:22:33:44:55", definition: simulator.definition, handler: simulator)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await simulator.serve(peripheral) }
            defer { group.cancelAll() }
            try await radio.central.withConnection(to: "00:11:22:33:44:55") { link in
                try await DIoTDevice.withDevice(on: link) { device in
                    let features = try await device.features()
                    #expect(features.count == 43)
                    #expect(features.first { $0.code == .temperature }?.value == .float(25))
                    let top = try DIoTFeatureRecord(code: .temperatureAlertTriggerTop, value: .float(50))
                    _ = try await device.setFeature(top)
                    #expect(try await device.feature(.temperatureAlertTriggerTop).value == .float(50))
                    #expect(try await device.channels().first { $0.channel == 1 }?.feature == .temperature)
                    #expect(try await device.deviceID() == simulator.configuration.deviceID)
                    var samples: [DIoTFeatureRecord] = []
                    for try await record in try await device.data(channel: 2) {
                        samples.append(record)
                        if samples.count == 3 { break }
                    }
                    #expect(samples.allSatisfy { $0.code == .heartRate })
                }
            }
        }
    }
}

import Synchronization
import Testing
import TetherCore

@testable import TetherBluetooth

/// `DIoTDevice` (ble-profiles.md B3–B7) without Bluetooth: the list assembly of split replies as a
/// value, then the device over a scripted in-test link (requests written, answers notified).
@Suite("DIoT device")
struct DIoTDeviceTests {
    /// `count` feature records with codes 1, 2, … and values as they decode from `00 00 00 <code>`.
    static func features(_ count: Int) throws -> [DIoTFeatureRecord] {
        try (1...count).map { code throws(TetherError) in try DIoTFeatureRecord(recordBytes: [UInt8(code), 0, 0, 0, UInt8(code)]) }
    }

    // MARK: - DIoTListAssembler

    @Test("B7: a list in one short notification is complete at once")
    func assemblerShortList() throws {
        var features = DIoTListAssembler<DIoTFeatureRecord>()
        let step = try features.append(hex("07 00 00 C8 41 04 48 00 00 00"))
        #expect(try step == .complete([DIoTFeatureRecord(code: .temperature, value: .float(25)), DIoTFeatureRecord(code: .heartRate, value: .int32(72))]))
        var channels = DIoTListAssembler<DIoTChannelRecord>()
        // The whole map of nine channels fits in one notification at any MTU (18 bytes).
        let map = (1...9).map { DIoTChannelRecord(channel: UInt8($0), feature: .empty) }
        #expect(try channels.append(map.flatMap(\.bytes)) == .complete(map))
    }

    @Test("a list cut at MTU 23 is complete with its short tail", arguments: [23, 24, 27, 100])
    func assemblerSplitList(mtu: Int) throws {
        let records = try Self.features(43)
        let notifications = try DIoTFeatureRecord.notifications(for: records, maximumLength: mtu - 3)
        var assembler = DIoTListAssembler<DIoTFeatureRecord>()
        for (index, notification) in notifications.enumerated() {
            let step = try assembler.append(notification)
            if index == notifications.count - 1 {
                #expect(step == .complete(records))
            } else {
                #expect(step == .needMore)
            }
        }
    }

    @Test("a list that fills its last notification waits for the pause")
    func assemblerFullTail() throws {
        let records = try Self.features(8)
        var assembler = DIoTListAssembler<DIoTFeatureRecord>()
        for notification in try DIoTFeatureRecord.notifications(for: records, maximumLength: 20) {
            #expect(try assembler.append(notification) == .needMore)
        }
        #expect(assembler.records == records)
        // At MTU 247 the 43 features (215 bytes) fit in one notification: nothing shows it is the last.
        var single = DIoTListAssembler<DIoTFeatureRecord>()
        #expect(try single.append(Self.features(43).flatMap(\.bytes)) == .needMore)
        // Rates: 4 records fill 20 bytes; 3 do not.
        var rates = DIoTListAssembler<DIoTRateRecord>()
        #expect(try rates.append(hex("01 E8 03 00 00 02 00 00 00 00 03 00 00 00 00 04 00 00 00 00")) == .needMore)
        let step = try rates.append(hex("05 00 00 00 00"))
        #expect(step == .complete(rates.records))
        #expect(rates.records.map(\.channel) == [1, 2, 3, 4, 5])
    }

    @Test("malformed notifications and endless lists are refused with the codec's codes")
    func assemblerRefusals() throws {
        var channels = DIoTListAssembler<DIoTChannelRecord>()
        expectError(.malformedFrame) { try channels.append(hex("01 07 02")) }
        expectError(.malformedFrame) { try channels.append([]) }
        var features = DIoTListAssembler<DIoTFeatureRecord>()
        let full = try Self.features(4).flatMap(\.bytes)
        for _ in 0..<64 { #expect(try features.append(full) == .needMore) }
        expectError(.unexpectedResponse) { try features.append(full) }
    }

    @Test("writes go with response when the characteristic allows it")
    func writeTypes() {
        #expect(DIoTDevice.writeType(for: [.write, .writeWithoutResponse, .notify]) == .withResponse)
        #expect(DIoTDevice.writeType(for: [.writeWithoutResponse, .notify]) == .withoutResponse)
        #expect(DIoTDevice.writeType(for: [.read, .notify]) == nil)
    }

    // MARK: - DIoTDevice over a scripted link

    @Test("B7: fetch, set and clean are written as the reference shows and their answers decoded")
    func requests() async throws {
        let link = ScriptedLink { link, id, value in
            switch value {
            case hex("01"): link.notify(id, hex("07 00 00 C8 41 04 48 00 00 00"))
            case hex("01 04"): link.notify(id, hex("04 48 00 00 00"))
            case hex("02 21 00 00 48 42"): link.notify(id, hex("21 00 00 48 42"))
            case hex("03 21"): link.notify(id, hex("21 00 00 00 00"))
            case hex("02 03 12"): link.notify(id, hex("03 12"))
            case hex("02 01 F4 01 00 00"): link.notify(id, hex("01 F4 01 00 00"))
            default: break
            }
        }
        try await DIoTDevice.withDevice(on: link, timeout: .seconds(30)) { device in
            #expect(try await device.features().map(\.description) == ["temperature = 25.0", "heartRate = 72"])
            #expect(try await device.feature(.heartRate).value == .int32(72))
            let set = try await device.setFeature(try DIoTFeatureRecord(code: .temperatureAlertTriggerTop, value: .float(50)))
            #expect(set.value == .float(50))
            #expect(try await device.cleanFeature(.temperatureAlertTriggerTop).value == .float(0))
            #expect(try await device.setChannel(channel: 3, feature: .activityStepCounter) == DIoTChannelRecord(channel: 3, feature: .activityStepCounter))
            #expect(try await device.setRate(channel: 1, intervalMilliseconds: 500).intervalMilliseconds == 500)
        }
        #expect(link.writes.map(\.value) == ["01", "01 04", "02 21 00 00 48 42", "03 21", "02 03 12", "02 01 F4 01 00 00"].map(hex))
        #expect(link.writes.map(\.characteristic.characteristic) == ([0xC001, 0xC001, 0xC001, 0xC001, 0xC002, 0xC003] as [UInt16]).map { BluetoothUUID($0) })
        #expect(link.writes.allSatisfy { $0.type == .withResponse })
        // B3: C001, C002, C003 and then 2A19.
        #expect(link.subscribed.prefix(4).map(\.characteristic) == ([0xC001, 0xC002, 0xC003, 0x2A19] as [UInt16]).map { BluetoothUUID($0) })
    }

    // The pause is an hour: the list can only arrive within the time limit by ending at its tail.
    @Test("a split list ends at its short tail, without waiting for the pause", .timeLimit(.minutes(1)))
    func splitList() async throws {
        let records = try Self.features(43)
        let link = ScriptedLink { link, id, value in
            guard value == [0x01] else { return }
            for notification in try! DIoTFeatureRecord.notifications(for: records, maximumLength: 20) {
                link.notify(id, notification)
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        let received = try await DIoTDevice.withDevice(on: link, listQuietPeriod: .seconds(3600)) { device in try await device.features() }
        #expect(received == records)
    }

    @Test("a list whose last notification is full ends after the pause")
    func fullTail() async throws {
        let rates = (1...8).map { DIoTRateRecord(channel: UInt8($0), intervalMilliseconds: UInt32($0) * 100) }
        let link = ScriptedLink { link, id, value in
            guard value == [0x01] else { return }
            for notification in try! DIoTRateRecord.notifications(for: rates, maximumLength: 20) { link.notify(id, notification) }
        }
        let received = try await DIoTDevice.withDevice(on: link, listQuietPeriod: .milliseconds(100)) { device in try await device.rates() }
        #expect(received == rates)
    }

    @Test("no answer is a timeout, and a late answer is not taken for the next request's")
    func timeoutAndLateAnswer() async throws {
        // The first request goes unanswered until the central has given up; the test then
        // sends its answer late and gives the central time to read and drop it (it cannot
        // tell a late answer from the next request's once that request is out).
        let unanswered = Mutex<BluetoothCharacteristicID?>(nil)
        let link = ScriptedLink { link, id, value in
            let isFirst = unanswered.withLock { first in
                guard first == nil else { return false }
                first = id
                return true
            }
            if !isFirst { link.notify(id, hex("01 12 02 04")) }
        }
        try await DIoTDevice.withDevice(on: link, timeout: .seconds(1)) { device in
            let error = await #expect(throws: TetherError.self) { try await device.channels() }
            #expect(error?.code == .timeout)
            link.notify(try #require(unanswered.withLock { $0 }), hex("01 07 02 04"))
            try await Task.sleep(for: .milliseconds(500))
            #expect(
                try await device.channels() == [
                    DIoTChannelRecord(channel: 1, feature: .activityStepCounter), DIoTChannelRecord(channel: 2, feature: .heartRate),
                ])
        }
    }

    @Test("a single-record answer for something else is skipped; a malformed one is the codec's error")
    func singleRecordAnswers() async throws {
        let link = ScriptedLink { link, id, value in
            if value == hex("01 05") {
                link.notify(id, hex("05"))
            } else {
                link.notify(id, hex("04 00"))
                link.notify(id, hex("02 04"))
            }
        }
        try await DIoTDevice.withDevice(on: link, timeout: .seconds(30)) { device async throws in
            #expect(try await device.channel(2) == DIoTChannelRecord(channel: 2, feature: .heartRate))
            let error = await #expect(throws: TetherError.self) { try await device.channel(5) }
            #expect(error?.code == .malformedFrame)
            let outside = await #expect(throws: TetherError.self) { try await device.setChannel(channel: 10, feature: .heartRate) }
            #expect(outside?.code == .invalidArgument)
        }
        #expect(link.writes.count == 2)
    }

    @Test("a characteristic that only takes writes without response gets them")
    func writeWithoutResponse() async throws {
        let link = ScriptedLink(commandProperties: [.writeWithoutResponse, .notify]) { link, id, _ in link.notify(id, hex("03 00")) }
        try await DIoTDevice.withDevice(on: link) { device in _ = try await device.cleanChannel(3) }
        #expect(link.writes.map(\.type) == [.withoutResponse])
    }

    @Test("a device without the command interface is refused; one without a battery still opens")
    func missingCharacteristics() async throws {
        let bare = ScriptedLink(services: [BluetoothService(uuid: DIoTGATT.batteryService, characteristics: [])]) { _, _, _ in }
        let error = await #expect(throws: TetherError.self) { try await DIoTDevice.withDevice(on: bare) { _ in } }
        #expect(error?.code == .gattAttributeNotFound)

        let link = ScriptedLink(battery: nil) { _, _, _ in }
        try await DIoTDevice.withDevice(on: link) { device in
            let updates = #expect(throws: TetherError.self) { try device.batteryUpdates() }
            #expect(updates?.code == .gattAttributeNotFound)
        }
        #expect(!link.subscribed.contains(DIoTDevice.batteryID))
    }

    @Test("battery levels: read, and notified to every open stream; a bad value ends them with malformedFrame")
    func battery() async throws {
        let link = ScriptedLink { _, _, _ in }
        link.values[DIoTDevice.batteryID] = hex("5A")
        try await DIoTDevice.withDevice(on: link) { device in
            #expect(try await device.battery().percent == 90)
            let first = try device.batteryUpdates()
            let second = try device.batteryUpdates()
            link.notify(DIoTDevice.batteryID, [80])
            link.notify(DIoTDevice.batteryID, [101])
            for stream in [first, second] {
                var iterator = stream.makeAsyncIterator()
                #expect(try await iterator.next()?.percent == 80)
                let error = await #expect(throws: TetherError.self) { _ = try await iterator.next() }
                #expect(error?.code == .malformedFrame)
            }
        }
    }

    @Test("data: a channel's records as notified, `00` yields nothing; channels outside 1...9 are refused")
    func data() async throws {
        let link = ScriptedLink { _, _, _ in }
        let id = try DIoTDevice.dataID(2)
        link.values[id] = hex("00")
        try await DIoTDevice.withDevice(on: link) { device in
            #expect(try await device.readData(channel: 2) == [])
            let stream = try await device.data(channel: 2)
            link.notify(id, hex("00"))
            link.notify(id, hex("09 00 00 20 C0"))
            link.notify(id, hex("07 00 00 C8 41 04 48 00 00 00"))
            link.end()
            var received: [String] = []
            for try await record in stream { received.append(record.description) }
            #expect(received == ["accX = -2.5", "temperature = 25.0", "heartRate = 72"])
            let error = await #expect(throws: TetherError.self) { try await device.data(channel: 0) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test("debug: the text of every notification until the pause")
    func debug() async throws {
        let link = ScriptedLink { link, id, value in
            guard id == DIoTDevice.debugID, value == Array("help".utf8) else { return }
            link.notify(id, Array("commands: help, ".utf8))
            try? await Task.sleep(for: .milliseconds(20))
            link.notify(id, Array("version\n".utf8))
        }
        try await DIoTDevice.withDevice(on: link, timeout: .seconds(5), listQuietPeriod: .seconds(2)) { device async throws in
            #expect(try await device.debug("help") == "commands: help, version\n")
            let silent = await #expect(throws: TetherError.self) { try await device.debug("nothing") }
            #expect(silent?.code == .timeout)
            let empty = await #expect(throws: TetherError.self) { try await device.debug("") }
            #expect(empty?.code == .invalidArgument)
        }
    }

    @Test("the link ending during a request is a disconnection, not a timeout")
    func linkEnds() async throws {
        let link = ScriptedLink { link, _, _ in link.end() }
        try await DIoTDevice.withDevice(on: link, timeout: .seconds(5)) { device in
            let error = await #expect(throws: TetherError.self) { try await device.features() }
            #expect(error?.code == .peripheralDisconnected)
        }
    }
}

/// A link whose peripheral is a script: each write is recorded and handed to `respond`, which
/// notifies answers (after returning from the write, as a device does).
final class ScriptedLink: BluetoothConnection {
    struct Write: Sendable {
        var value: [UInt8]
        var characteristic: BluetoothCharacteristicID
        var type: BluetoothWriteType
    }

    typealias Respond = @Sendable (ScriptedLink, BluetoothCharacteristicID, [UInt8]) async -> Void

    private struct State {
        var writes: [Write] = []
        var subscribed: [BluetoothCharacteristicID] = []
        var streams: [BluetoothCharacteristicID: [AsyncStream<[UInt8]>.Continuation]] = [:]
        var values: [BluetoothCharacteristicID: [UInt8]] = [:]
        var ended = false
    }

    let identifier = "AA:BB:CC:DD:EE:FF"
    let gatt: [BluetoothService]
    private let respond: Respond
    private let state = Mutex(State())

    init(services: [BluetoothService], respond: @escaping Respond) {
        self.gatt = services
        self.respond = respond
    }

    /// The DIoT table of B1, with `commandProperties` on `C001`–`C003` and `battery` on `2A19`.
    convenience init(
        commandProperties: BluetoothCharacteristicProperties = [.write, .writeWithoutResponse, .notify],
        battery: BluetoothCharacteristicProperties? = [.read, .notify], respond: @escaping Respond
    ) {
        func service(_ uuid: BluetoothUUID, _ characteristics: [(BluetoothUUID, BluetoothCharacteristicProperties)]) -> BluetoothService {
            BluetoothService(
                uuid: uuid,
                characteristics: characteristics.map {
                    BluetoothCharacteristic(id: BluetoothCharacteristicID(service: uuid, characteristic: $0.0), properties: $0.1)
                })
        }
        var services = [
            service(DIoTGATT.deviceInformationService, DIoTGATT.deviceInformationCharacteristics.map { ($0, .read) }),
            service(DIoTGATT.commandService, DIoTCommand.Table.allCases.map { ($0.characteristic, commandProperties) }),
            service(DIoTGATT.dataService, DIoTGATT.dataCharacteristics.map { ($0, [.read, .notify]) }),
            service(DIoTGATT.identifierService, [(DIoTGATT.identifier, .read)]),
            service(DIoTGATT.debugService, [(DIoTGATT.debugConsole, [.write, .writeWithoutResponse, .notify])]),
        ]
        if let battery { services.append(service(DIoTGATT.batteryService, [(DIoTGATT.batteryLevel, battery)])) }
        self.init(services: services, respond: respond)
    }

    var writes: [Write] { state.withLock { $0.writes } }
    var subscribed: [BluetoothCharacteristicID] { state.withLock { $0.subscribed } }

    /// What reads return.
    var values: [BluetoothCharacteristicID: [UInt8]] {
        get { state.withLock { $0.values } }
        set { state.withLock { $0.values = newValue } }
    }

    func notify(_ id: BluetoothCharacteristicID, _ value: [UInt8]) {
        for stream in state.withLock({ $0.streams[id] ?? [] }) { stream.yield(value) }
    }

    /// The link ends: every notification stream finishes.
    func end() {
        let streams = state.withLock { state in
            state.ended = true
            return state.streams.values.flatMap { $0 }
        }
        for stream in streams { stream.finish() }
    }

    func services() async throws(TetherError) -> [BluetoothService] { gatt }

    func read(_ characteristic: BluetoothCharacteristicID) async throws(TetherError) -> [UInt8] {
        _ = try await self.characteristic(characteristic)
        return state.withLock { $0.values[characteristic] } ?? []
    }

    func write(_ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType) async throws(TetherError) {
        _ = try await self.characteristic(characteristic)
        state.withLock { $0.writes.append(Write(value: value, characteristic: characteristic, type: type)) }
        let respond = respond
        Task { await respond(self, characteristic, value) }
    }

    func notifications(of characteristic: BluetoothCharacteristicID) async throws(TetherError) -> AsyncStream<[UInt8]> {
        _ = try await self.characteristic(characteristic)
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let ended = state.withLock { state in
            state.subscribed.append(characteristic)
            state.streams[characteristic, default: []].append(continuation)
            return state.ended
        }
        if ended { continuation.finish() }
        return stream
    }

    func rssi() async throws(TetherError) -> Int { -55 }

    func maximumValueLength() async -> Int { 20 }

    func disconnection() async throws(TetherError) -> BluetoothDisconnection {
        throw TetherError(.cancelled, "not tracked")
    }
}

public import Logging
import Synchronization
public import TetherBluetooth
public import TetherCore

/// A simulated DIoT sensor (ble-profiles.md Part B) behind any peripheral: its feature,
/// channel and rate tables answered on `C001`–`C003` with the Tether conventions of B4 (every
/// set and clean confirmed by a notification of the changed record; fetch-all and clean-all
/// answered with the whole table, split at record boundaries), live data on `D001`–`D009` at
/// each channel's rate (automatic: on every change), a heart rate and step counter that move, a
/// draining battery on `2A19`, the identifier on `FFD1`, and a debug console on `FF71`.
public final class DIoTSimulator: BluetoothPeripheralHandler {
    public struct Configuration: Sendable {
        /// The sensor's 16-byte identifier (the reference's worked example by default).
        public var deviceID: DIoTDeviceID = try! DIoTDeviceID("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
        /// How often the live values change.
        public var tick: Duration = .seconds(1)
        /// How often the battery loses a percent.
        public var batteryDrainInterval: Duration = .seconds(30)

        public init() {}
    }

    public let configuration: Configuration
    let logger: Logger
    private let state = Mutex(State())

    struct State {
        var features: [DIoTFeatureCode: DIoTFeatureValue] = DIoTSimulator.initialFeatures
        var channels: [UInt8: DIoTFeatureCode] = [1: .temperature, 2: .heartRate]
        var rates: [UInt8: UInt32] = [1: 1000]
        var battery: UInt8 = 90
        var ticks = 0
    }

    static var initialFeatures: [DIoTFeatureCode: DIoTFeatureValue] {
        var features: [DIoTFeatureCode: DIoTFeatureValue] = [:]
        for code in DIoTFeatureCode.allKnown where code != .empty {
            features[code] = (try? DIoTFeatureValue(bytes: [0, 0, 0, 0], as: code.valueType)) ?? .raw([0, 0, 0, 0])
        }
        features[.heartRate] = .int32(72)
        features[.temperature] = .float(25)
        features[.humidity] = .float(45.5)
        features[.activityStepCounter] = .int32(1234)
        return features
    }

    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tether.agent.diot")) {
        self.configuration = configuration
        self.logger = logger
    }

    static func id(_ service: BluetoothUUID, _ characteristic: BluetoothUUID) -> BluetoothCharacteristicID {
        BluetoothCharacteristicID(service: service, characteristic: characteristic)
    }

    /// The GATT table of B1 with the Tether convention's properties.
    public var definition: BluetoothPeripheralDefinition {
        let command: BluetoothCharacteristicProperties = [.write, .writeWithoutResponse, .notify]
        func service(_ uuid: BluetoothUUID, _ characteristics: [(BluetoothUUID, BluetoothCharacteristicProperties)]) -> BluetoothService {
            BluetoothService(uuid: uuid, characteristics: characteristics.map { BluetoothCharacteristic(id: Self.id(uuid, $0.0), properties: $0.1) })
        }
        let advertisement = DIoTAdvertisement(deviceID: configuration.deviceID, localName: DIoTAdvertisement.defaultName(deviceID: configuration.deviceID))
        return BluetoothPeripheralDefinition(
            advertisement: advertisement.advertisement(),
            services: [
                service(DIoTGATT.deviceInformationService, DIoTGATT.deviceInformationCharacteristics.map { ($0, .read) }),
                service(DIoTGATT.batteryService, [(DIoTGATT.batteryLevel, [.read, .notify])]),
                service(DIoTGATT.commandService, [(DIoTGATT.features, command), (DIoTGATT.channels, command), (DIoTGATT.rates, command)]),
                service(DIoTGATT.dataService, DIoTGATT.dataCharacteristics.map { ($0, [.read, .notify]) }),
                service(DIoTGATT.identifierService, [(DIoTGATT.identifier, .read)]),
                service(DIoTGATT.debugService, [(DIoTGATT.debugConsole, command)]),
            ])
    }

    /// Serves `link` until cancelled: live values, data at each channel's rate, the battery.
    public func serve(_ link: any BluetoothPeripheralLink) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                var elapsed: [UInt8: UInt64] = [:]
                let tick = configuration.tick
                let tickMs = UInt64(tick.components.seconds) * 1000 + UInt64(tick.components.attoseconds / 1_000_000_000_000_000)
                while (try? await Task.sleep(for: tick)) != nil {
                    let (channels, rates) = state.withLock { state in
                        state.ticks += 1
                        if case .int32(let steps)? = state.features[.activityStepCounter] { state.features[.activityStepCounter] = .int32(steps + 1) }
                        state.features[.heartRate] = .int32(70 + Int32(state.ticks % 7))
                        return (state.channels, state.rates)
                    }
                    for (channel, _) in channels {
                        let rate = UInt64(rates[channel] ?? 0)
                        elapsed[channel, default: 0] += tickMs
                        // Automatic (0): every change, which is every tick here.
                        guard rate == 0 || elapsed[channel, default: 0] >= rate else { continue }
                        elapsed[channel] = 0
                        sendData(channel: channel, on: link)
                    }
                }
            }
            group.addTask { [self] in
                while (try? await Task.sleep(for: configuration.batteryDrainInterval)) != nil {
                    let level = state.withLock { state in
                        state.battery = state.battery > 0 ? state.battery - 1 : 0
                        return state.battery
                    }
                    link.notify([level], on: Self.id(DIoTGATT.batteryService, DIoTGATT.batteryLevel))
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func dataRecord(channel: UInt8) -> [UInt8] {
        state.withLock { state in
            guard let code = state.channels[channel], let value = state.features[code], let record = try? DIoTFeatureRecord(code: code, value: value) else {
                return [0x00]
            }
            return record.bytes
        }
    }

    private func sendData(channel: UInt8, on link: any BluetoothPeripheralLink) {
        guard let uuid = DIoTGATT.dataCharacteristic(channel: channel) else { return }
        link.notify(dataRecord(channel: channel), on: Self.id(DIoTGATT.dataService, uuid))
    }

    // MARK: - BluetoothPeripheralHandler

    public func read(_ characteristic: BluetoothCharacteristicID, link: any BluetoothPeripheralLink) async throws(TetherError) -> [UInt8] {
        switch (characteristic.service, characteristic.characteristic) {
        case (DIoTGATT.deviceInformationService, DIoTGATT.manufacturerName): return Array("Daatrics".utf8)
        case (DIoTGATT.deviceInformationService, DIoTGATT.modelNumber): return Array("DIoT Sensor".utf8)
        case (DIoTGATT.deviceInformationService, DIoTGATT.hardwareRevision): return Array("1.0".utf8)
        case (DIoTGATT.deviceInformationService, DIoTGATT.firmwareRevision): return Array("2.1.0".utf8)
        case (DIoTGATT.deviceInformationService, DIoTGATT.softwareRevision): return Array("2.1.0".utf8)
        case (DIoTGATT.batteryService, DIoTGATT.batteryLevel): return [state.withLock { $0.battery }]
        case (DIoTGATT.identifierService, DIoTGATT.identifier): return configuration.deviceID.bytes
        case (DIoTGATT.dataService, let uuid):
            guard let channel = DIoTGATT.channel(ofDataCharacteristic: uuid) else { break }
            return dataRecord(channel: channel)
        default: break
        }
        throw TetherError(.gattOperationNotPermitted, "\(characteristic) is not readable")
    }

    public func write(
        _ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType, link: any BluetoothPeripheralLink
    ) async throws(TetherError) {
        if characteristic == Self.id(DIoTGATT.debugService, DIoTGATT.debugConsole) {
            let answer = console(String(decoding: value, as: UTF8.self).trimmingWhitespace)
            for chunk in (try? LW003LogAssembler.notifications(for: answer, maximumLength: link.maximumNotificationLength)) ?? [] {
                link.notify(chunk, on: characteristic)
            }
            return
        }
        guard characteristic.service == DIoTGATT.commandService, let table = DIoTCommand.Table(characteristic: characteristic.characteristic) else {
            throw TetherError(.gattOperationNotPermitted, "\(characteristic) is not writable")
        }
        // Requests the device cannot read are ignored, as are channels outside 1...9 (B4).
        guard let command = try? DIoTCommand(decoding: value, table: table) else { return }
        for notification in answer(command, maximumLength: link.maximumNotificationLength) {
            link.notify(notification, on: characteristic)
        }
    }

    public func notifyingChanged(_ characteristic: BluetoothCharacteristicID, enabled: Bool, link: any BluetoothPeripheralLink) async {
        // A data channel sends its current value when a central starts listening.
        guard enabled, characteristic.service == DIoTGATT.dataService, let channel = DIoTGATT.channel(ofDataCharacteristic: characteristic.characteristic)
        else {
            return
        }
        sendData(channel: channel, on: link)
    }

    /// The notifications answering `command` (B4 and its Tether conventions).
    func answer(_ command: DIoTCommand, maximumLength: Int) -> [[UInt8]] {
        let channelRange = DIoTGATT.channelRange
        return state.withLock { state -> [[UInt8]] in
            func features(_ codes: [DIoTFeatureCode]) -> [[UInt8]] {
                let records = codes.compactMap { code in state.features[code].flatMap { try? DIoTFeatureRecord(code: code, value: $0) } }
                return (try? DIoTFeatureRecord.notifications(for: records, maximumLength: maximumLength)) ?? []
            }
            func channels(_ numbers: [UInt8]) -> [[UInt8]] {
                let records = numbers.map { DIoTChannelRecord(channel: $0, feature: state.channels[$0] ?? .empty) }
                return (try? DIoTChannelRecord.notifications(for: records, maximumLength: maximumLength)) ?? []
            }
            func rates(_ numbers: [UInt8]) -> [[UInt8]] {
                let records = numbers.map { DIoTRateRecord(channel: $0, intervalMilliseconds: state.rates[$0] ?? 0) }
                return (try? DIoTRateRecord.notifications(for: records, maximumLength: maximumLength)) ?? []
            }
            let allFeatures = state.features.keys.sorted { $0.rawValue < $1.rawValue }
            switch command {
            case .fetchAllFeatures: return features(allFeatures)
            case .fetchFeature(let code): return state.features[code] == nil ? [] : features([code])
            case .setFeature(let record):
                guard state.features[record.code] != nil else { return [] }
                state.features[record.code] = record.value
                return features([record.code])
            case .cleanFeature(let code):
                guard state.features[code] != nil else { return [] }
                state.features[code] = (try? DIoTFeatureValue(bytes: [0, 0, 0, 0], as: code.valueType)) ?? .raw([0, 0, 0, 0])
                return features([code])
            case .cleanAllFeatures:
                for code in allFeatures { state.features[code] = (try? DIoTFeatureValue(bytes: [0, 0, 0, 0], as: code.valueType)) ?? .raw([0, 0, 0, 0]) }
                return features(allFeatures)
            case .fetchAllChannels: return channels(Array(channelRange))
            case .fetchChannel(let channel): return channelRange.contains(channel) ? channels([channel]) : []
            case .setChannel(let record):
                guard channelRange.contains(record.channel) else { return [] }
                state.channels[record.channel] = record.feature == .empty ? nil : record.feature
                return channels([record.channel])
            case .cleanChannel(let channel):
                guard channelRange.contains(channel) else { return [] }
                state.channels[channel] = nil
                return channels([channel])
            case .cleanAllChannels:
                state.channels = [:]
                return channels(Array(channelRange))
            case .fetchAllRates: return rates(Array(channelRange))
            case .fetchRate(let channel): return channelRange.contains(channel) ? rates([channel]) : []
            case .setRate(let record):
                guard channelRange.contains(record.channel) else { return [] }
                state.rates[record.channel] = record.intervalMilliseconds
                return rates([record.channel])
            case .cleanRate(let channel):
                guard channelRange.contains(channel) else { return [] }
                state.rates[channel] = nil
                return rates([channel])
            case .cleanAllRates:
                state.rates = [:]
                return rates(Array(channelRange))
            }
        }
    }

    /// The debug console (B6, Tether convention): `help`, `version`, `reset`, anything else echoed.
    func console(_ line: String) -> String {
        switch line {
        case "help": return "commands: help, version, reset\n"
        case "version": return "DIoT simulator 2.1.0 (Tether)\n"
        case "reset":
            state.withLock { state in
                state.features = Self.initialFeatures
                state.channels = [1: .temperature, 2: .heartRate]
                state.rates = [1: 1000]
            }
            return "reset\n"
        default: return "unknown: \(line)\n"
        }
    }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

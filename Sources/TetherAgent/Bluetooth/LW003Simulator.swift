import Foundation
public import Logging
import Synchronization
public import TetherBluetooth
public import TetherCore

/// A simulated MOKO LW003-V3 (ble-profiles.md Part A) behind any peripheral: BlueZ's through
/// `tether-agent ble-simulate`, or in-process. It advertises its battery, climate, MAC and the
/// password flag; asks for the password; answers commands one at a time; uploads its stored
/// beacon records on request (paced, pausable, ending with the summary); writes a log while
/// notify is on; drains its battery; and drops the link with the reference's reasons.
public final class LW003Simulator: BluetoothPeripheralHandler {
    public struct Configuration: Sendable {
        /// The device's MAC, advertised and read with command `0x18`.
        public var mac = "C8:47:8C:12:34:56"
        /// The login password (8 printable ASCII characters); nil: none is asked for.
        public var password: String?
        /// How many beacon records it holds.
        public var records = 120
        /// Its time zone, in half-hours (16: UTC+08:00).
        public var timeZoneHalfHours: Int8 = 16
        /// The pause between two storage frames (the reference's convention: at least 20 ms).
        public var framePacing: Duration = .milliseconds(20)
        /// How often a log line is written while notify is on.
        public var logInterval: Duration = .seconds(1)
        /// How often the battery loses a percent.
        public var batteryDrainInterval: Duration = .seconds(30)
        /// Without a login this long after a central listens, the device drops it (reason `01`).
        public var loginTimeout: Duration = .seconds(60)
        public var faults = LW003Faults()
        public var seed: UInt64 = 1

        public init() {}
    }

    public let configuration: Configuration
    let logger: Logger
    private let state: Mutex<State>
    /// Work the handler's calls start but must not wait for (an upload, a drop), done by `run`.
    private let jobs = AsyncQueue<Job>()

    struct State {
        var batteryPercent: UInt8 = 100
        var password: String?
        var loggedIn = false
        var paused = false
        var records: [LW003BeaconRecord]
        var sessions = 0
        var logLines = 0
    }

    enum Job: Sendable {
        case upload(days: UInt16)
        case disconnect(reason: LW003DisconnectReason)
        case sessionStarted(Int)
    }

    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tether.agent.lw003")) throws(TetherError) {
        if let password = configuration.password { _ = try LW003Login(password: password) }
        guard MACAddress.bytes(configuration.mac) != nil else {
            throw TetherError(.invalidArgument, "\"\(configuration.mac.prefix(32))\" is not a MAC address such as C8:47:8C:12:34:56")
        }
        self.configuration = configuration
        self.logger = logger
        let now = UInt32(clamping: Int64(Date().timeIntervalSince1970))
        self.state = Mutex(
            State(
                password: configuration.password,
                records: LW003BeaconLog.records(
                    count: configuration.records, now: now, timeZoneHalfHours: configuration.timeZoneHalfHours, seed: configuration.seed)))
    }

    static func id(_ characteristic: BluetoothUUID) -> BluetoothCharacteristicID {
        BluetoothCharacteristicID(service: LW003GATT.customService, characteristic: characteristic)
    }

    /// What it advertises and serves: the whole GATT table of A1, both write kinds on `AA00`
    /// and `AA02` (the reference's convention).
    public var definition: BluetoothPeripheralDefinition {
        get throws(TetherError) {
            let battery = state.withLock { $0.batteryPercent }
            let advertisement = LW003Advertisement(
                txPower: 0, batteryPercent: battery, batteryMillivolts: Self.millivolts(battery), passwordRequired: configuration.password != nil,
                temperature: 24.5, humidity: 41.25, mac: configuration.mac)
            let information = LW003GATT.deviceInformationCharacteristics + [LW003GATT.serialNumber]
            let writable: BluetoothCharacteristicProperties = [.write, .writeWithoutResponse, .notify]
            return BluetoothPeripheralDefinition(
                advertisement: try advertisement.advertisement(localName: LW003Advertisement.defaultName(mac: configuration.mac)),
                services: [
                    BluetoothService(
                        uuid: LW003GATT.deviceInformationService,
                        characteristics: information.map {
                            BluetoothCharacteristic(
                                id: BluetoothCharacteristicID(service: LW003GATT.deviceInformationService, characteristic: $0), properties: .read)
                        }),
                    BluetoothService(
                        uuid: LW003GATT.customService,
                        characteristics: [
                            BluetoothCharacteristic(id: Self.id(LW003GATT.login), properties: writable),
                            BluetoothCharacteristic(id: Self.id(LW003GATT.disconnectReason), properties: .notify),
                            BluetoothCharacteristic(id: Self.id(LW003GATT.command), properties: writable),
                            BluetoothCharacteristic(id: Self.id(LW003GATT.storage), properties: .notify),
                            BluetoothCharacteristic(id: Self.id(LW003GATT.log), properties: .notify),
                        ]),
                ])
        }
    }

    /// The battery's voltage for a charge: 3.0 V empty to 4.2 V full.
    static func millivolts(_ percent: UInt8) -> UInt16 {
        3000 + UInt16(percent) * 12
    }

    /// Serves `link` until cancelled: the uploads and drops the handler asks for, the log, the
    /// battery, the login timeout and the faults.
    private func run(on link: any BluetoothPeripheralLink) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                // A session's timers wait beside the queue, which must keep serving uploads and drops.
                await withDiscardingTaskGroup { timers in
                    while let job = await jobs.next() {
                        if case .sessionStarted = job {
                            timers.addTask { await self.perform(job, on: link) }
                        } else {
                            await perform(job, on: link)
                        }
                    }
                }
            }
            group.addTask { [self] in
                while (try? await Task.sleep(for: configuration.logInterval)) != nil {
                    guard link.isNotifying(Self.id(LW003GATT.log)) else { continue }
                    let line = state.withLock { state in
                        state.logLines += 1
                        return "\(state.logLines) battery=\(state.batteryPercent)% records=\(state.records.count)\n"
                    }
                    for chunk in (try? LW003LogAssembler.notifications(for: line, maximumLength: link.maximumNotificationLength)) ?? [] {
                        link.notify(chunk, on: Self.id(LW003GATT.log))
                    }
                }
            }
            group.addTask { [self] in
                while (try? await Task.sleep(for: configuration.batteryDrainInterval)) != nil {
                    state.withLock { $0.batteryPercent = $0.batteryPercent > 0 ? $0.batteryPercent - 1 : 0 }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func perform(_ job: Job, on link: any BluetoothPeripheralLink) async {
        switch job {
        case .upload(let days):
            await upload(days: days, on: link)
        case .disconnect(let reason):
            link.notify(reason.bytes, on: Self.id(LW003GATT.disconnectReason))
            try? await Task.sleep(for: .milliseconds(100))
            await link.disconnectCentrals()
        case .sessionStarted(let session):
            let faults = configuration.faults
            if let after = faults.dropLinkAfter {
                try? await Task.sleep(for: after)
                if state.withLock({ $0.sessions == session }) {
                    logger.info("fault: dropping the link")
                    await link.disconnectCentrals()
                }
            } else if configuration.password != nil {
                try? await Task.sleep(for: configuration.loginTimeout)
                if state.withLock({ $0.sessions == session && !$0.loggedIn }) {
                    await perform(.disconnect(reason: .loginTimeout), on: link)
                }
            }
        }
    }

    private func upload(days: UInt16, on link: any BluetoothPeripheralLink) async {
        let now = UInt32(clamping: Int64(Date().timeIntervalSince1970))
        let cutoff = days == UInt16.max ? 0 : now &- min(now, UInt32(days) * 86_400)
        let records = state.withLock { $0.records.filter { $0.scanTime >= cutoff } }
        let storage = Self.id(LW003GATT.storage)
        let frames = (try? LW003StorageFrame.frames(for: records, maximumLength: min(LW003StorageFrame.maximumLength, link.maximumNotificationLength))) ?? []
        var sent = 0
        for (index, frame) in frames.enumerated() {
            while state.withLock({ $0.paused }) {
                guard (try? await Task.sleep(for: .milliseconds(50))) != nil else { return }
            }
            guard let bytes = try? frame.bytes() else { continue }
            if configuration.faults.garbageFrames, index % 3 == 1 {
                link.notify([0xED, 0x02, 0x01, 0xFF, 0x01, 0x02], on: storage)
            }
            guard link.notify(bytes, on: storage) else { return }
            if case .records(let inFrame) = frame { sent += inFrame.count }
            guard (try? await Task.sleep(for: configuration.framePacing)) != nil else { return }
        }
        link.notify(LW003StorageFrame.summary(total: UInt16(clamping: sent)).bytesOrEmpty, on: storage)
    }

    // MARK: - BluetoothPeripheralHandler

    public func read(_ characteristic: BluetoothCharacteristicID, link: any BluetoothPeripheralLink) async throws(TetherError) -> [UInt8] {
        guard characteristic.service == LW003GATT.deviceInformationService else {
            throw TetherError(.gattOperationNotPermitted, "\(characteristic) is not readable")
        }
        let text: String
        switch characteristic.characteristic {
        case LW003GATT.modelNumber: text = "LW003-B"
        case LW003GATT.serialNumber: text = "TETHER-" + configuration.mac.filter { $0 != ":" }
        case LW003GATT.firmwareRevision: text = "V3.0.5"
        case LW003GATT.hardwareRevision: text = "V1.0"
        case LW003GATT.softwareRevision: text = "V3.0.5"
        case LW003GATT.manufacturerName: text = "MOKO TECHNOLOGY LTD."
        default: throw TetherError(.gattAttributeNotFound, "no \(characteristic)")
        }
        return Array(text.utf8)
    }

    public func write(
        _ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType, link: any BluetoothPeripheralLink
    ) async throws(TetherError) {
        guard characteristic.service == LW003GATT.customService else { throw TetherError(.gattOperationNotPermitted, "\(characteristic) is not writable") }
        switch characteristic.characteristic {
        case LW003GATT.login:
            // Malformed logins are ignored, as the device ignores what it cannot read.
            guard let login = try? LW003Login(decoding: value) else { return }
            let accepted = state.withLock { state in
                state.loggedIn = !configuration.faults.refusePasswords && login.password == state.password
                return state.loggedIn
            }
            logger.info("login", metadata: ["accepted": "\(accepted)"])
            link.notify(accepted ? LW003LoginResult.accepted.bytes : LW003LoginResult.rejected.bytes, on: Self.id(LW003GATT.login))
        case LW003GATT.command:
            guard state.withLock({ $0.password == nil || $0.loggedIn }), let frame = try? LW003Frame(decoding: value) else { return }
            link.notify(command(frame), on: Self.id(LW003GATT.command))
        default:
            throw TetherError(.gattOperationNotPermitted, "\(characteristic) is not writable")
        }
    }

    /// Serves `link` until cancelled: the uploads and drops the handler's calls start, the log,
    /// the battery, the login timeout and the faults.
    public func serve(_ link: any BluetoothPeripheralLink) async {
        await run(on: link)
    }

    /// The reply to a command frame (A4), and the work it starts.
    private func command(_ frame: LW003Frame) -> [UInt8] {
        let ok = LW003Frame.writeResult(frame.command, success: true).bytes
        let failed = LW003Frame.writeResult(frame.command, success: false).bytes
        switch (frame.flag, frame.command) {
        case (.read, .batteryVoltage):
            let millivolts = Self.millivolts(state.withLock { $0.batteryPercent })
            return (try? LW003Frame.readReply(.batteryVoltage, value: [UInt8(millivolts >> 8), UInt8(millivolts & 0xFF)]).bytes) ?? failed
        case (.read, .timeZone):
            return (try? LW003Frame.readReply(.timeZone, value: [UInt8(bitPattern: configuration.timeZoneHalfHours)]).bytes) ?? failed
        case (.read, .chipMAC):
            return (try? LW003Frame.readReply(.chipMAC, value: MACAddress.bytes(configuration.mac) ?? []).bytes) ?? failed
        case (.read, .passwordRequired):
            return (try? LW003Frame.readReply(.passwordRequired, value: [configuration.password == nil ? 0 : 1]).bytes) ?? failed
        case (.write, .startStorageUpload):
            guard frame.payload.count == 2 else { return failed }
            jobs.append(.upload(days: UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])))
            return ok
        case (.write, .pauseStorageUpload):
            guard frame.payload.count == 1, frame.payload[0] <= 1 else { return failed }
            state.withLock { $0.paused = frame.payload[0] == 0 }
            return ok
        case (.write, .eraseStorage):
            state.withLock { $0.records = [] }
            return ok
        case (.write, .powerOff), (.write, .restart):
            jobs.append(.disconnect(reason: .shutDown))
            return ok
        case (.write, .factoryReset):
            jobs.append(.disconnect(reason: .factoryReset))
            return ok
        case (.write, .password):
            guard let login = try? LW003Login(password: String(decoding: frame.payload, as: UTF8.self)) else { return failed }
            state.withLock { $0.password = login.password }
            jobs.append(.disconnect(reason: .passwordChanged))
            return ok
        default:
            return failed
        }
    }

    public func notifyingChanged(_ characteristic: BluetoothCharacteristicID, enabled: Bool, link: any BluetoothPeripheralLink) async {
        // A central turning on AA00's notifications starts a session: the login clock runs.
        guard characteristic == Self.id(LW003GATT.login), enabled else { return }
        let session = state.withLock { state in
            state.sessions += 1
            state.loggedIn = false
            state.paused = false
            return state.sessions
        }
        jobs.append(.sessionStarted(session))
    }
}

/// Faults a simulated LW003-V3 can be told to show.
public struct LW003Faults: Hashable, Sendable {
    /// Refuse every password.
    public var refusePasswords = false
    /// Drop the link this long after each session starts.
    public var dropLinkAfter: Duration?
    /// Put a malformed frame into the storage stream now and then.
    public var garbageFrames = false

    public init(refusePasswords: Bool = false, dropLinkAfter: Duration? = nil, garbageFrames: Bool = false) {
        self.refusePasswords = refusePasswords
        self.dropLinkAfter = dropLinkAfter
        self.garbageFrames = garbageFrames
    }
}

extension LW003StorageFrame {
    var bytesOrEmpty: [UInt8] { (try? bytes()) ?? [] }
}

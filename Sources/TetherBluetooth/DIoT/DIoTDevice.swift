import Synchronization
public import TetherCore

/// A connected DIoT (Daatrics) sensor (ble-profiles.md Part B): its feature table, channel map and
/// rate table on the command interface (`C001`–`C003`), its live data (`D001`–`D009`), battery,
/// identifier, device information and debug console.
///
/// Open one with ``withDevice(on:timeout:listQuietPeriod:_:)`` inside a central's `withConnection`.
///
/// Requests follow the Tether conventions of B4: the sensor answers every request (fetch, set,
/// clean) with a notification of records on the characteristic written to, and that notification
/// is the confirmation; a missing answer is a `timeout` error after ``timeout``. Requests on one
/// characteristic go one at a time (a request waits for the one before it), requests on different
/// characteristics may overlap. A list (fetch-all, clean-all) longer than one notification
/// arrives cut at record boundaries: it is complete when a notification is shorter than a full one
/// could be, or else after ``listQuietPeriod`` without a further notification (see
/// `DIoTListAssembler`). Notifications that arrive between requests (late answers to a request
/// that timed out) are dropped, never taken as the next request's answer.
public final class DIoTDevice: Sendable {
    /// The link it runs on.
    public let link: any BluetoothConnection
    /// How long the answer to a request may take (Tether convention: 5 s; the vendors' SDKs have none).
    public let timeout: Duration
    /// How long a list reply may pause between two notifications before it is taken as complete,
    /// when its last notification does not show it (it was full).
    public let listQuietPeriod: Duration
    private let features = DIoTReplyChannel()
    private let channelMap = DIoTReplyChannel()
    private let rateTable = DIoTReplyChannel()
    /// The battery level characteristic, when the device has one.
    private let batteryCharacteristic: BluetoothCharacteristic?
    private let batteryFeed = DIoTBatteryFeed()
    /// One debug command at a time.
    private let debugToken = AsyncQueue<Void>()

    private init(link: any BluetoothConnection, timeout: Duration, listQuietPeriod: Duration, batteryCharacteristic: BluetoothCharacteristic?) {
        self.link = link
        self.timeout = timeout
        self.listQuietPeriod = listQuietPeriod
        self.batteryCharacteristic = batteryCharacteristic
        debugToken.append(())
    }

    static let batteryID = BluetoothCharacteristicID(service: DIoTGATT.batteryService, characteristic: DIoTGATT.batteryLevel)
    static let identifierID = BluetoothCharacteristicID(service: DIoTGATT.identifierService, characteristic: DIoTGATT.identifier)
    static let debugID = BluetoothCharacteristicID(service: DIoTGATT.debugService, characteristic: DIoTGATT.debugConsole)

    static func commandID(_ table: DIoTCommand.Table) -> BluetoothCharacteristicID {
        BluetoothCharacteristicID(service: DIoTGATT.commandService, characteristic: table.characteristic)
    }

    private func replies(_ table: DIoTCommand.Table) -> DIoTReplyChannel {
        switch table {
        case .features: features
        case .channels: channelMap
        case .rates: rateTable
        }
    }

    /// Turns on the notifications of `C001`, `C002`, `C003` and, when the device has it, `2A19`
    /// (the order of both vendor SDKs), runs `body`, and turns them off.
    ///
    /// - Parameters:
    ///   - timeout: how long the answer to each request may take.
    ///   - listQuietPeriod: how long a list reply may pause between notifications.
    /// - Throws: `gattAttributeNotFound` when the device lacks the command interface (`C000` with
    ///   `C001`–`C003`).
    public static func withDevice<Result: Sendable>(
        on link: any BluetoothConnection, timeout: Duration = .seconds(5), listQuietPeriod: Duration = .milliseconds(150),
        _ body: (DIoTDevice) async throws -> Result
    ) async throws -> Result {
        for table in DIoTCommand.Table.allCases { _ = try await link.characteristic(commandID(table)) }
        let battery = try await optionalCharacteristic(batteryID, on: link)
        let device = DIoTDevice(link: link, timeout: timeout, listQuietPeriod: listQuietPeriod, batteryCharacteristic: battery)
        var pumps: [(DIoTReplyChannel, AsyncStream<[UInt8]>)] = []
        for table in DIoTCommand.Table.allCases {
            pumps.append((device.replies(table), try await link.notifications(of: commandID(table))))
        }
        let batteryValues = device.batteryNotifies ? try await link.notifications(of: batteryID) : nil
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for (replies, values) in pumps {
                group.addTask {
                    for await value in values { replies.received(value) }
                    replies.finish()
                }
            }
            if let batteryValues {
                let feed = device.batteryFeed
                group.addTask {
                    for await value in batteryValues { feed.yield(value) }
                    feed.finish()
                }
            } else {
                device.batteryFeed.finish()
            }
            defer { group.cancelAll() }
            return try await body(device)
        }
    }

    /// The characteristic, or nil when the device does not have it.
    private static func optionalCharacteristic(
        _ id: BluetoothCharacteristicID, on link: any BluetoothConnection
    ) async throws(TetherError) -> BluetoothCharacteristic? {
        do {
            return try await link.characteristic(id)
        } catch  where error.code == .gattAttributeNotFound {
            return nil
        }
    }

    private var batteryNotifies: Bool {
        batteryCharacteristic.map { !$0.properties.isDisjoint(with: [.notify, .indicate]) } ?? false
    }

    // MARK: - Device information, battery, identifier

    /// The Device Information service's texts (`180A`).
    public func deviceInformation() async throws(TetherError) -> DIoTDeviceInformation {
        func text(_ uuid: BluetoothUUID) async throws(TetherError) -> String {
            let value = try await link.read(BluetoothCharacteristicID(service: DIoTGATT.deviceInformationService, characteristic: uuid))
            return String(decoding: value, as: UTF8.self)
        }
        return DIoTDeviceInformation(
            manufacturer: try await text(DIoTGATT.manufacturerName), model: try await text(DIoTGATT.modelNumber),
            hardware: try await text(DIoTGATT.hardwareRevision), firmware: try await text(DIoTGATT.firmwareRevision),
            software: try await text(DIoTGATT.softwareRevision))
    }

    /// The link's signal strength in dBm (the DIoT SDK's `didReceiveRSSI`); see
    /// ``BluetoothConnection/rssi()`` for what each stack can measure.
    public func rssi() async throws(TetherError) -> Int {
        try await link.rssi()
    }

    /// Reads the battery level (`2A19`).
    public func battery() async throws(TetherError) -> DIoTBatteryLevel {
        try DIoTBatteryLevel(decoding: try await link.read(Self.batteryID))
    }

    /// The battery levels the device notifies from now on (their notifications were turned on
    /// with the device). Any number of these streams may be open at once.
    ///
    /// - Throws: `gattAttributeNotFound` when the device has no `2A19`, `gattOperationNotPermitted`
    ///   when it does not notify it.
    public func batteryUpdates() throws(TetherError) -> DIoTBatteryStream {
        guard let batteryCharacteristic else {
            throw TetherError(.gattAttributeNotFound, "the peripheral \(link.identifier) has no characteristic \(Self.batteryID)")
        }
        guard batteryNotifies else {
            throw TetherError(
                .gattOperationNotPermitted,
                "\(Self.batteryID) of \(link.identifier) does not notify (it allows \(batteryCharacteristic.properties.bluezFlags))")
        }
        return DIoTBatteryStream(values: batteryFeed.subscribe())
    }

    /// Reads the device identifier (`FFD1`).
    ///
    /// - Throws: `malformedFrame` unless it is 16 bytes (the Tether convention).
    public func deviceID() async throws(TetherError) -> DIoTDeviceID {
        try DIoTDeviceID(bytes: try await link.read(Self.identifierID))
    }

    // MARK: - Features (C001)

    /// The whole feature table.
    public func features() async throws(TetherError) -> [DIoTFeatureRecord] {
        try await list(.fetchAllFeatures, as: DIoTFeatureRecord.self)
    }

    /// One feature's value.
    public func feature(_ code: DIoTFeatureCode) async throws(TetherError) -> DIoTFeatureRecord {
        try await one(.fetchFeature(code)) { $0.code == code }
    }

    /// Sets a feature's value; returns the record the device confirmed.
    @discardableResult
    public func setFeature(_ record: DIoTFeatureRecord) async throws(TetherError) -> DIoTFeatureRecord {
        try await one(.setFeature(record)) { $0.code == record.code }
    }

    /// Resets a feature to its default (value 0); returns the record the device confirmed.
    @discardableResult
    public func cleanFeature(_ code: DIoTFeatureCode) async throws(TetherError) -> DIoTFeatureRecord {
        try await one(.cleanFeature(code)) { $0.code == code }
    }

    /// Resets every feature; returns the table the device answered.
    @discardableResult
    public func cleanAllFeatures() async throws(TetherError) -> [DIoTFeatureRecord] {
        try await list(.cleanAllFeatures, as: DIoTFeatureRecord.self)
    }

    // MARK: - Channels (C002)

    /// The whole channel map.
    public func channels() async throws(TetherError) -> [DIoTChannelRecord] {
        try await list(.fetchAllChannels, as: DIoTChannelRecord.self)
    }

    /// The feature one channel (1…9) carries.
    public func channel(_ channel: UInt8) async throws(TetherError) -> DIoTChannelRecord {
        try Self.checkChannel(channel)
        return try await one(.fetchChannel(channel)) { $0.channel == channel }
    }

    /// Maps `feature` to `channel` (1…9), replacing what it carried; returns the device's confirmation.
    @discardableResult
    public func setChannel(channel: UInt8, feature: DIoTFeatureCode) async throws(TetherError) -> DIoTChannelRecord {
        try Self.checkChannel(channel)
        return try await one(.setChannel(DIoTChannelRecord(channel: channel, feature: feature))) { $0.channel == channel }
    }

    /// Unmaps a channel (1…9); returns the device's confirmation.
    @discardableResult
    public func cleanChannel(_ channel: UInt8) async throws(TetherError) -> DIoTChannelRecord {
        try Self.checkChannel(channel)
        return try await one(.cleanChannel(channel)) { $0.channel == channel }
    }

    /// Unmaps every channel; returns the map the device answered.
    @discardableResult
    public func cleanAllChannels() async throws(TetherError) -> [DIoTChannelRecord] {
        try await list(.cleanAllChannels, as: DIoTChannelRecord.self)
    }

    // MARK: - Rates (C003)

    /// The whole rate table.
    public func rates() async throws(TetherError) -> [DIoTRateRecord] {
        try await list(.fetchAllRates, as: DIoTRateRecord.self)
    }

    /// One channel's (1…9) rate.
    public func rate(_ channel: UInt8) async throws(TetherError) -> DIoTRateRecord {
        try Self.checkChannel(channel)
        return try await one(.fetchRate(channel)) { $0.channel == channel }
    }

    /// Sets how often `channel` (1…9) updates, in milliseconds (0: automatic); returns the
    /// device's confirmation.
    @discardableResult
    public func setRate(channel: UInt8, intervalMilliseconds: UInt32) async throws(TetherError) -> DIoTRateRecord {
        try Self.checkChannel(channel)
        return try await one(.setRate(DIoTRateRecord(channel: channel, intervalMilliseconds: intervalMilliseconds))) { $0.channel == channel }
    }

    /// Sets a channel (1…9) back to automatic; returns the device's confirmation.
    @discardableResult
    public func cleanRate(_ channel: UInt8) async throws(TetherError) -> DIoTRateRecord {
        try Self.checkChannel(channel)
        return try await one(.cleanRate(channel)) { $0.channel == channel }
    }

    /// Sets every channel back to automatic; returns the table the device answered.
    @discardableResult
    public func cleanAllRates() async throws(TetherError) -> [DIoTRateRecord] {
        try await list(.cleanAllRates, as: DIoTRateRecord.self)
    }

    // MARK: - Data (D001–D009)

    /// Turns on the notifications of a channel's data characteristic and returns its values as
    /// they come; they are turned off when the stream is dropped. One stream per channel at a time.
    ///
    /// - Throws: `invalidArgument` for a channel outside 1…9.
    public func data(channel: UInt8) async throws(TetherError) -> DIoTDataStream {
        DIoTDataStream(channel: channel, values: try await link.notifications(of: try Self.dataID(channel)))
    }

    /// Reads a channel's data characteristic: the records of the features mapped to it (none
    /// when the device answers `00`, nothing mapped).
    public func readData(channel: UInt8) async throws(TetherError) -> [DIoTFeatureRecord] {
        try DIoTFeatureRecord.decodeChannelData(try await link.read(try Self.dataID(channel)))
    }

    static func dataID(_ channel: UInt8) throws(TetherError) -> BluetoothCharacteristicID {
        guard let characteristic = DIoTGATT.dataCharacteristic(channel: channel) else {
            throw TetherError(.invalidArgument, "DIoT channel \(channel) is not one of 1...9")
        }
        return BluetoothCharacteristicID(service: DIoTGATT.dataService, characteristic: characteristic)
    }

    private static func checkChannel(_ channel: UInt8) throws(TetherError) {
        // The device ignores other channels (B4, convention 5): the request could only time out.
        _ = try dataID(channel)
    }

    // MARK: - Debug console (FF71)

    /// Writes a command to the debug console (`FF71`) and returns the text the device notifies in
    /// answer: everything until ``listQuietPeriod`` passes without a further notification. The
    /// console's notifications are on only during the call; one command at a time.
    ///
    /// - Throws: `invalidArgument` for an empty command or one longer than a write carries;
    ///   `timeout` when nothing comes back within ``timeout``.
    public func debug(_ command: String) async throws(TetherError) -> String {
        let bytes = Array(command.utf8)
        let limit = await link.maximumValueLength()
        guard !bytes.isEmpty, bytes.count <= limit else {
            throw TetherError(.invalidArgument, "a DIoT debug command is 1 to \(limit) bytes, not \(bytes.count)")
        }
        guard await debugToken.next() != nil else { throw TetherError(.cancelled, "cancelled before the DIoT debug command was sent") }
        defer { debugToken.append(()) }
        let values = try await link.notifications(of: Self.debugID)
        let replies = DIoTReplyChannel()
        let request = replies.beginRequest()
        let result = await withTaskGroup(of: Void.self) { group -> Result<String, TetherError> in
            group.addTask {
                for await value in values { replies.received(value) }
                replies.finish()
            }
            defer { group.cancelAll() }
            do throws(TetherError) {
                try await write(bytes, to: Self.debugID)
                var text: [UInt8] = []
                var wait = timeout
                while true {
                    switch await replies.next(for: request, within: wait) {
                    case .value(let value):
                        text += value
                        wait = listQuietPeriod
                    case .ended:
                        throw TetherError(.peripheralDisconnected, "the link to \(link.identifier) ended during a debug command")
                    case nil:
                        if Task.isCancelled { throw TetherError(.cancelled, "cancelled waiting for the DIoT debug console") }
                        guard !text.isEmpty else {
                            throw TetherError(.timeout, "the DIoT \(link.identifier) did not answer the debug command within \(timeout)")
                        }
                        return .success(String(decoding: text, as: UTF8.self))
                    }
                }
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: - Requests

    /// How to write to a characteristic with these properties: with response when it allows that,
    /// else without (the iOS SDK drops a write the properties do not allow); nil when it allows neither.
    static func writeType(for properties: BluetoothCharacteristicProperties) -> BluetoothWriteType? {
        if properties.contains(.write) { return .withResponse }
        if properties.contains(.writeWithoutResponse) { return .withoutResponse }
        return nil
    }

    private func write(_ bytes: [UInt8], to id: BluetoothCharacteristicID) async throws(TetherError) {
        let characteristic = try await link.characteristic(id)
        guard let type = Self.writeType(for: characteristic.properties) else {
            throw TetherError(.gattOperationNotPermitted, "\(id) of \(link.identifier) cannot be written (it allows \(characteristic.properties.bluezFlags))")
        }
        try await link.write(bytes, to: id, type: type)
    }

    /// Sends `command` once the request before it on the same characteristic is done (the caller
    /// hands the token back with `replies.token.append(())` when it has the answer).
    private func send(_ command: DIoTCommand, on replies: DIoTReplyChannel) async throws(TetherError) -> UInt64 {
        guard await replies.token.next() != nil else { throw TetherError(.cancelled, "cancelled before the DIoT request \(command) was sent") }
        let request = replies.beginRequest()
        do {
            try await write(command.bytes, to: Self.commandID(command.table))
        } catch {
            replies.token.append(())
            throw error
        }
        return request
    }

    /// A request answered by one record: the first notification holding exactly one record that
    /// `matches` (others are late answers to earlier requests, and skipped).
    private func one<Record: DIoTRecord>(_ command: DIoTCommand, matching matches: (Record) -> Bool) async throws(TetherError) -> Record {
        let replies = replies(command.table)
        let request = try await send(command, on: replies)
        defer { replies.token.append(()) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            switch await replies.next(for: request, within: deadline - clock.now) {
            case .value(let value):
                let records = try Record.decodeList(value)
                if records.count == 1, matches(records[0]) { return records[0] }
            case .ended:
                throw TetherError(.peripheralDisconnected, "the link to \(link.identifier) ended before the DIoT answered \(command)")
            case nil:
                if Task.isCancelled { throw TetherError(.cancelled, "cancelled waiting for the DIoT's answer to \(command)") }
                throw TetherError(.timeout, "the DIoT \(link.identifier) did not answer \(command) within \(timeout)")
            }
        }
    }

    /// A request answered by a list, possibly cut across notifications (see ``DIoTListAssembler``):
    /// the first notification within ``timeout``, each further one within ``listQuietPeriod``.
    private func list<Record: DIoTRecord>(_ command: DIoTCommand, as _: Record.Type) async throws(TetherError) -> [Record] {
        let replies = replies(command.table)
        let request = try await send(command, on: replies)
        defer { replies.token.append(()) }
        var assembler = DIoTListAssembler<Record>()
        var wait = timeout
        while true {
            switch await replies.next(for: request, within: wait) {
            case .value(let value):
                if case .complete(let records) = try assembler.append(value) { return records }
                wait = listQuietPeriod
            case .ended:
                throw TetherError(.peripheralDisconnected, "the link to \(link.identifier) ended before the DIoT answered \(command)")
            case nil:
                if Task.isCancelled { throw TetherError(.cancelled, "cancelled waiting for the DIoT's answer to \(command)") }
                guard !assembler.records.isEmpty else {
                    throw TetherError(.timeout, "the DIoT \(link.identifier) did not answer \(command) within \(timeout)")
                }
                return assembler.records
            }
        }
    }
}

/// The texts of a DIoT sensor's Device Information service (`180A`).
public struct DIoTDeviceInformation: Hashable, Sendable {
    /// `2A29`.
    public var manufacturer: String
    /// `2A24`.
    public var model: String
    /// `2A27`.
    public var hardware: String
    /// `2A26`.
    public var firmware: String
    /// `2A28`.
    public var software: String

    public init(manufacturer: String, model: String, hardware: String, firmware: String, software: String) {
        self.manufacturer = manufacturer
        self.model = model
        self.hardware = hardware
        self.firmware = firmware
        self.software = software
    }
}

/// The notifications of one characteristic that answers requests, and the token that lets one
/// request at a time use it. Each notification is stamped with the request in progress when it
/// arrived, so that a late answer to an earlier request is never read as the answer to the next.
final class DIoTReplyChannel: Sendable {
    /// What waiting for an answer gave.
    enum Next: Sendable {
        /// A notification.
        case value([UInt8])
        /// The link (or the device's scope) ended.
        case ended
    }

    private struct Stamped: Sendable {
        var request: UInt64
        var value: [UInt8]
    }

    private let values = AsyncQueue<Stamped>()
    private let current = Mutex<UInt64>(0)
    /// Taken for each request.
    let token = AsyncQueue<Void>()

    init() {
        token.append(())
    }

    /// A notification arrived.
    func received(_ value: [UInt8]) {
        values.append(Stamped(request: current.withLock { $0 }, value: value))
    }

    /// No more notifications.
    func finish() {
        values.finish()
    }

    /// Starts a request: notifications from now on are its answer, earlier ones are dropped.
    func beginRequest() -> UInt64 {
        current.withLock { current in
            current += 1
            return current
        }
    }

    /// The next notification of `request` within `duration`: nil when none came in time (or the
    /// waiting task was cancelled).
    func next(for request: UInt64, within duration: Duration) async -> Next? {
        let values = values
        return await within(duration) { () async -> Next? in
            while let stamped = await values.next() {
                if stamped.request >= request { return .value(stamped.value) }
            }
            return Task.isCancelled ? nil : .ended
        }
    }
}

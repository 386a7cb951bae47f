#if canImport(CoreBluetooth)
import CoreBluetooth
import Foundation
import Logging
import Synchronization
import TetherBluetooth
import TetherCore

/// The delegate of one central's `CBCentralManager` and of the peripherals it connects: it
/// turns CoreBluetooth's callbacks (which arrive on the central's queue) into the state below,
/// finishes or feeds the streams waiting on it, and hands each peripheral's callbacks to the
/// link that owns it.
final class CoreBluetoothDelegate: NSObject, Sendable {
    /// One running ``CoreBluetoothCentral/scan(_:)``.
    struct Scan {
        var options: BluetoothScanOptions
        var continuation: ScanContinuation
        /// What each peripheral last advertised, for a scan that reports changes only.
        var reported: [UUID: BluetoothAdvertisement] = [:]
    }

    /// What CoreBluetooth is asked to scan for: the union of the running scans.
    struct ScanFilter: Equatable {
        /// nil: every peripheral.
        var services: [BluetoothUUID]?
        var allowDuplicates: Bool
    }

    struct State {
        var bluetooth = BluetoothState.unknown
        var closed = false
        var nextID: UInt64 = 0
        var stateWatchers: [UInt64: AsyncStream<BluetoothState>.Continuation] = [:]
        var scans: [UInt64: Scan] = [:]
        /// The scan CoreBluetooth runs now (nil: none).
        var appliedScan: ScanFilter?
        /// Every peripheral scans have seen, by identifier: what ``CoreBluetoothConnection`` connects to.
        var peripherals: [UUID: CoreBluetoothObject<CBPeripheral>] = [:]
        /// The link to each peripheral, from `connect` until it ends.
        var links: [UUID: CoreBluetoothConnection] = [:]
    }

    typealias ScanContinuation = AsyncThrowingStream<BluetoothPeripheral, any Error>.Continuation

    let state = Mutex(State())
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
        super.init()
    }

    // MARK: - Registrations

    /// Adds a state stream and yields the current state to it; nil once closed.
    func watchStates(_ continuation: AsyncStream<BluetoothState>.Continuation) -> UInt64? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.nextID += 1
            state.stateWatchers[state.nextID] = continuation
            // Under the lock, so that a change cannot overtake the current state.
            continuation.yield(state.bluetooth)
            return state.nextID
        }
    }

    func unwatchStates(_ id: UInt64) {
        _ = state.withLock { $0.stateWatchers.removeValue(forKey: id) }
    }

    /// Adds a scan, or says why there can be none now.
    func addScan(_ options: BluetoothScanOptions, _ continuation: ScanContinuation) throws(TetherError) -> UInt64 {
        let added = state.withLock { state -> Result<UInt64, TetherError> in
            guard !state.closed else { return .failure(TetherError(.connectionClosed, "scanning: the central is closed")) }
            guard state.bluetooth == .poweredOn else { return .failure(CoreBluetoothMapping.error(state.bluetooth, doing: "scanning")) }
            state.nextID += 1
            state.scans[state.nextID] = Scan(options: options, continuation: continuation)
            return .success(state.nextID)
        }
        return try added.get()
    }

    func removeScan(_ id: UInt64) {
        _ = state.withLock { $0.scans.removeValue(forKey: id) }
    }

    /// Makes CoreBluetooth scan for what the running scans want, or stop. On the central's queue.
    func applyScan(_ manager: CBCentralManager) {
        let change = state.withLock { state -> ScanFilter?? in
            let wanted = state.bluetooth == .poweredOn ? Self.filter(state.scans.values) : nil
            guard wanted != state.appliedScan else { return .none }
            state.appliedScan = wanted
            return .some(wanted)
        }
        guard let change, manager.state == .poweredOn else { return }
        if let filter = change {
            manager.scanForPeripherals(
                withServices: filter.services?.map(CoreBluetoothMapping.cbuuid), options: [CBCentralManagerScanOptionAllowDuplicatesKey: filter.allowDuplicates]
            )
        } else {
            manager.stopScan()
        }
    }

    /// CoreBluetooth scans for the union of the scans' services; each scan keeps its own
    /// (``BluetoothScanOptions/admits(_:)``).
    static func filter(_ scans: some Collection<Scan>) -> ScanFilter? {
        guard !scans.isEmpty else { return nil }
        let allowDuplicates = scans.contains { $0.options.allowDuplicates }
        if scans.contains(where: { $0.options.services.isEmpty }) { return ScanFilter(services: nil, allowDuplicates: allowDuplicates) }
        let services = Set(scans.flatMap(\.options.services)).sorted { $0.uuidString < $1.uuidString }
        return ScanFilter(services: services, allowDuplicates: allowDuplicates)
    }

    /// Registers `link` as the one link to its peripheral. A link still closing is waited for
    /// (until `deadline`); one that is up makes this throw.
    func register(_ link: CoreBluetoothConnection, until deadline: ContinuousClock.Instant) async throws(TetherError) {
        while true {
            let outcome = state.withLock { state -> Result<CoreBluetoothConnection?, TetherError> in
                guard !state.closed else { return .failure(TetherError(.connectionClosed, "connecting to \(link.identifier): the central is closed")) }
                if let existing = state.links[link.peripheralID] { return .success(existing) }
                state.links[link.peripheralID] = link
                return .success(nil)
            }
            guard let existing = try outcome.get() else { return }
            guard existing.isClosing else {
                throw TetherError(.connectionFailed, "\(link.identifier) is already connected through this central")
            }
            try await existing.waitForEnd(until: deadline)
        }
    }

    /// Removes `link` if it is still the registered one; true if it was.
    func unregister(_ link: CoreBluetoothConnection) -> Bool {
        state.withLock { state in
            guard state.links[link.peripheralID] === link else { return false }
            state.links[link.peripheralID] = nil
            return true
        }
    }

    private func connection(of peripheral: CBPeripheral) -> CoreBluetoothConnection? {
        state.withLock { $0.links[peripheral.identifier] }
    }

    /// Closes the central: nothing new is accepted, and what is running is returned to be ended.
    func close() -> (watchers: [AsyncStream<BluetoothState>.Continuation], scans: [ScanContinuation], links: [CoreBluetoothConnection]) {
        state.withLock { state in
            guard !state.closed else { return ([], [], []) }
            state.closed = true
            defer {
                state.stateWatchers = [:]
                state.scans = [:]
                state.links = [:]
            }
            return (Array(state.stateWatchers.values), state.scans.values.map(\.continuation), Array(state.links.values))
        }
    }
}

// MARK: - CBCentralManagerDelegate

extension CoreBluetoothDelegate: CBCentralManagerDelegate {
    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        let bluetooth = CoreBluetoothMapping.state(central.state)
        let ended = state.withLock { state -> (scans: [ScanContinuation], links: [CoreBluetoothConnection])? in
            guard state.bluetooth != bluetooth else { return nil }
            state.bluetooth = bluetooth
            for watcher in state.stateWatchers.values { watcher.yield(bluetooth) }
            guard bluetooth != .poweredOn else { return ([], []) }
            // Below powered on, scanning stops and every link drops; below powered off, the
            // CBPeripheral objects are no longer valid.
            if bluetooth != .poweredOff { state.peripherals = [:] }
            defer {
                state.scans = [:]
                state.links = [:]
                state.appliedScan = nil
            }
            return (state.scans.values.map(\.continuation), Array(state.links.values))
        }
        guard let ended else { return }
        logger.debug("Bluetooth state changed", metadata: ["tether.bluetooth.state": "\(bluetooth)"])
        let error = CoreBluetoothMapping.error(bluetooth, doing: "scanning")
        for scan in ended.scans { scan.finish(throwing: error) }
        // As the simulated radio does: the radio went away under the link.
        for link in ended.links { link.ended(.linkLost) }
    }

    func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi: NSNumber) {
        let result = CoreBluetoothMapping.peripheral(peripheral, advertisementData: advertisementData, rssi: rssi)
        let id = peripheral.identifier
        let object = CoreBluetoothObject(peripheral)
        let deliveries = state.withLock { state in
            state.peripherals[id] = object
            var deliveries: [ScanContinuation] = []
            for key in Array(state.scans.keys) {
                guard let scan = state.scans[key], scan.options.admits(result) else { continue }
                if !scan.options.allowDuplicates {
                    guard scan.reported[id] != result.advertisement else { continue }
                    state.scans[key]?.reported[id] = result.advertisement
                }
                deliveries.append(scan.continuation)
            }
            return deliveries
        }
        for continuation in deliveries { continuation.yield(result) }
    }

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        logger.debug("connected", metadata: ["tether.peripheral": "\(peripheral.identifier.uuidString)"])
        connection(of: peripheral)?.didConnect()
    }

    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        logger.debug(
            "connecting failed",
            metadata: ["tether.peripheral": "\(peripheral.identifier.uuidString)", "tether.error": .string(error.map { String(describing: $0) } ?? "none")])
        guard let link = connection(of: peripheral), unregister(link) else { return }
        link.didFailToConnect(error)
    }

    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?) {
        logger.debug(
            "disconnected",
            metadata: ["tether.peripheral": "\(peripheral.identifier.uuidString)", "tether.error": .string(error.map { String(describing: $0) } ?? "none")])
        guard let link = connection(of: peripheral), unregister(link) else { return }
        link.didDisconnect(error)
    }
}

// MARK: - CBPeripheralDelegate

extension CoreBluetoothDelegate: CBPeripheralDelegate {
    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
        connection(of: peripheral)?.didDiscoverServices(error)
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?) {
        connection(of: peripheral)?.didDiscoverCharacteristics(error)
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        connection(of: peripheral)?.didUpdateValue(characteristic, error: error)
    }

    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        connection(of: peripheral)?.didWriteValue(characteristic, error: error)
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?) {
        connection(of: peripheral)?.didUpdateNotificationState(characteristic, error: error)
    }

    func peripheral(_ peripheral: CBPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?) {
        connection(of: peripheral)?.didReadRSSI(RSSI, error: error)
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
        connection(of: peripheral)?.isReadyToSendWriteWithoutResponse()
    }

    func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {
        // The discovered services stay as they were; operations on removed ones fail with
        // CoreBluetooth's error. Implemented so that CoreBluetooth does not warn about it.
        logger.debug("the peripheral changed its services", metadata: ["tether.peripheral": "\(peripheral.identifier.uuidString)"])
    }
}
#endif

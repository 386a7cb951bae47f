#if canImport(CoreBluetooth)
import CoreBluetooth
import Foundation
import Logging
import Synchronization
import TetherBluetooth
import TetherCore

/// A link to one peripheral through CoreBluetooth: `connect(_:options:)`, every service and every
/// characteristic discovered, GATT calls on the `CBPeripheral`, and
/// `cancelPeripheralConnection(_:)` at the end of the scope.
///
/// Calls into CoreBluetooth are sent to the central's queue, where CoreBluetooth also calls the
/// delegate, which hands this link the callbacks for its peripheral. What those callbacks and
/// the calling tasks share is in `state`; each wait is on an `AsyncPromise`, which honours
/// cancellation, and everything still waiting when the link ends fails with
/// ``TetherError/Code/peripheralDisconnected``.
final class CoreBluetoothConnection: BluetoothConnection {
    let identifier: String
    let peripheralID: UUID
    let peripheral: CoreBluetoothObject<CBPeripheral>
    private let central: CoreBluetoothCentral
    private let state = Mutex(State())
    /// Connected, and every characteristic discovered (or why not).
    private let ready = AsyncPromise<Void, TetherError>()
    /// Why the link ended, once it has.
    private let ending = AsyncPromise<BluetoothDisconnection, TetherError>()

    private enum Phase: Equatable {
        case connecting
        case discoveringServices
        case discoveringCharacteristics(remaining: Int)
        case ready
        case ended
    }

    /// The streams of one characteristic's notifications.
    private struct Subscription {
        var streams: [UInt64: AsyncStream<[UInt8]>.Continuation] = [:]
        /// The answer to `setNotifyValue(true, for:)`, until it comes.
        var enabling: AsyncPromise<Void, TetherError>?
    }

    private struct State {
        var phase = Phase.connecting
        /// Why the app cancelled the connection (nil: it has not): what a clean disconnection means.
        var closing: BluetoothDisconnection?
        var services: [BluetoothService] = []
        var characteristics: [BluetoothCharacteristicID: CoreBluetoothObject<CBCharacteristic>] = [:]
        /// The read waiting for its value, one per characteristic (later reads share it).
        var reads: [BluetoothCharacteristicID: AsyncPromise<[UInt8], TetherError>] = [:]
        /// Writes with response waiting for their answers, in the order they were sent.
        var writes: [BluetoothCharacteristicID: [AsyncPromise<Void, TetherError>]] = [:]
        /// The RSSI read waiting for `peripheral(_:didReadRSSI:error:)` (later reads share it).
        var rssiRead: AsyncPromise<Int, TetherError>?
        var subscriptions: [BluetoothCharacteristicID: Subscription] = [:]
        /// Writes without response waiting for `peripheralIsReady(toSendWriteWithoutResponse:)`.
        var sendWaiters: [AsyncPromise<Bool, TetherError>] = []
        var nextStream: UInt64 = 0
    }

    private init(central: CoreBluetoothCentral, identifier: String, peripheralID: UUID, peripheral: CoreBluetoothObject<CBPeripheral>) {
        self.central = central
        self.identifier = identifier
        self.peripheralID = peripheralID
        self.peripheral = peripheral
    }

    static func with<Result: Sendable>(
        _ central: CoreBluetoothCentral, identifier: String, options: BluetoothConnectionOptions, _ body: (any BluetoothConnection) async throws -> Result
    ) async throws -> Result {
        guard let peripheralID = UUID(uuidString: identifier) else {
            throw TetherError(.invalidArgument, "\"\(identifier.prefix(64))\" is not a CoreBluetooth peripheral identifier (a UUID)")
        }
        let deadline = ContinuousClock.now.advanced(by: options.timeout)
        try await central.waitUntilPoweredOn(within: options.timeout, doing: "connecting to \(identifier)")
        guard let peripheral = await central.peripheral(peripheralID) else {
            throw TetherError(.peripheralNotFound, "CoreBluetooth knows no peripheral \(identifier) (scan for it first)")
        }
        let connection = CoreBluetoothConnection(central: central, identifier: identifier, peripheralID: peripheralID, peripheral: peripheral)
        try await central.delegate.register(connection, until: deadline)
        do {
            try await connection.open(until: deadline, timeout: options.timeout)
            let result = try await body(connection)
            await connection.close(.byApp)
            return result
        } catch {
            await connection.close(.byApp)
            throw error
        }
    }

    /// Connects and discovers, within the deadline; on timeout the connection is cancelled.
    private func open(until deadline: ContinuousClock.Instant, timeout: Duration) async throws(TetherError) {
        let manager = central.manager
        let delegate = central.delegate
        let peripheral = peripheral
        central.queue.async {
            peripheral.object.delegate = delegate
            manager.object.connect(peripheral.object, options: nil)
        }
        let identifier = identifier
        let remaining = max(deadline - ContinuousClock.now, .zero)
        let result = await ready.result(within: remaining) {
            .failure(TetherError(.timeout, "connecting to \(identifier) and discovering its services took longer than \(timeout)"))
        }
        guard case .failure(let error) = result else {
            central.logger.debug("ready", metadata: ["tether.peripheral": "\(identifier)"])
            return
        }
        if Task.isCancelled {
            await close(.byApp)
            throw TetherError(.cancelled, "stopped connecting to \(identifier)")
        }
        await close(error.code == .timeout ? .timeout : .byApp)
        throw error
    }

    /// Cancels the connection (once) and waits a little for CoreBluetooth to confirm; the link
    /// ends with `reason` unless the peripheral's own reason came first.
    func close(_ reason: BluetoothDisconnection) async {
        let first = state.withLock { state -> Bool in
            guard state.closing == nil, state.phase != .ended else { return false }
            state.closing = reason
            return true
        }
        guard first else { return }
        let manager = central.manager
        let peripheral = peripheral
        central.queue.async { manager.object.cancelPeripheralConnection(peripheral.object) }
        // CoreBluetooth answers with didDisconnectPeripheral. If it does not within 5 s (or the
        // caller is cancelled), the link ends here: a late answer then finds no link to end.
        _ = await ending.result(within: .seconds(5)) { .success(reason) }
        if central.delegate.unregister(self) { ended(reason) }
    }

    /// Whether the app has cancelled the connection and it is not yet over.
    var isClosing: Bool {
        state.withLock { $0.closing != nil && $0.phase != .ended }
    }

    /// Waits until the link has ended (for a new link to the same peripheral).
    func waitForEnd(until deadline: ContinuousClock.Instant) async throws(TetherError) {
        let ending = ending
        let ended = await within(max(deadline - ContinuousClock.now, .zero)) {
            _ = await ending.result(ifCancelled: { .success(.byApp) })
            return ending.isResolved ? true : nil
        }
        if Task.isCancelled { throw TetherError(.cancelled, "stopped waiting for the previous link to \(identifier) to end") }
        guard ended == true else { throw TetherError(.timeout, "the previous link to \(identifier) did not end in time") }
    }

    /// The link is over: everything waiting on it fails, its streams finish. Once.
    func ended(_ reason: BluetoothDisconnection) {
        let pending = state.withLock { state -> State? in
            guard state.phase != .ended else { return nil }
            let pending = state
            state.phase = .ended
            state.reads = [:]
            state.writes = [:]
            state.rssiRead = nil
            state.subscriptions = [:]
            state.sendWaiters = []
            return pending
        }
        guard let pending else { return }
        central.logger.debug("link ended", metadata: ["tether.peripheral": "\(identifier)", "tether.reason": "\(reason)"])
        let error = TetherError(.peripheralDisconnected, "\(identifier) disconnected: \(reason)")
        ready.resolve(.failure(error))
        ending.resolve(.success(reason))
        for read in pending.reads.values { read.resolve(.failure(error)) }
        for write in pending.writes.values.joined() { write.resolve(.failure(error)) }
        pending.rssiRead?.resolve(.failure(error))
        for waiter in pending.sendWaiters { waiter.resolve(.failure(error)) }
        for subscription in pending.subscriptions.values {
            subscription.enabling?.resolve(.failure(error))
            for stream in subscription.streams.values { stream.finish() }
        }
    }

    private var disconnected: TetherError {
        TetherError(.peripheralDisconnected, "\(identifier) is no longer connected")
    }

    // MARK: - Callbacks (on the central's queue)

    func didConnect() {
        let discover = state.withLock { state -> Bool in
            guard state.phase == .connecting, state.closing == nil else { return false }
            state.phase = .discoveringServices
            return true
        }
        if discover { peripheral.object.discoverServices(nil) }
    }

    func didFailToConnect(_ error: (any Error)?) {
        let reason = CoreBluetoothMapping.disconnection(error, closing: nil, connecting: true)
        let detail = error.map { ": \($0.localizedDescription.prefix(200))" } ?? ""
        ready.resolve(.failure(TetherError(reason == .timeout ? .timeout : .connectionFailed, "connecting to \(identifier) failed (\(reason))\(detail)")))
        ended(reason)
    }

    func didDisconnect(_ error: (any Error)?) {
        let closing = state.withLock { $0.closing }
        ended(CoreBluetoothMapping.disconnection(error, closing: closing))
    }

    func didDiscoverServices(_ error: (any Error)?) {
        guard state.withLock({ $0.phase == .discoveringServices }) else { return }
        if let error {
            ready.resolve(.failure(CoreBluetoothMapping.gattError(error, doing: "discovering the services of \(identifier)")))
            return
        }
        let services = peripheral.object.services ?? []
        guard !services.isEmpty else { return discovered() }
        state.withLock { $0.phase = .discoveringCharacteristics(remaining: services.count) }
        for service in services { peripheral.object.discoverCharacteristics(nil, for: service) }
    }

    func didDiscoverCharacteristics(_ error: (any Error)?) {
        let done = state.withLock { state -> Bool? in
            guard case .discoveringCharacteristics(let remaining) = state.phase else { return nil }
            state.phase = .discoveringCharacteristics(remaining: remaining - 1)
            return remaining <= 1
        }
        guard let done else { return }
        if let error {
            ready.resolve(.failure(CoreBluetoothMapping.gattError(error, doing: "discovering the characteristics of \(identifier)")))
            return
        }
        if done { discovered() }
    }

    /// Every service's characteristics are in: the link is ready.
    private func discovered() {
        var services: [BluetoothService] = []
        var characteristics: [BluetoothCharacteristicID: CoreBluetoothObject<CBCharacteristic>] = [:]
        for service in peripheral.object.services ?? [] {
            guard let serviceUUID = CoreBluetoothMapping.uuid(service.uuid) else { continue }
            var found: [BluetoothCharacteristic] = []
            for characteristic in service.characteristics ?? [] {
                guard let uuid = CoreBluetoothMapping.uuid(characteristic.uuid) else { continue }
                let id = BluetoothCharacteristicID(service: serviceUUID, characteristic: uuid)
                // The first of a repeated UUID is the one the pair names.
                guard characteristics[id] == nil else { continue }
                characteristics[id] = CoreBluetoothObject(characteristic)
                found.append(BluetoothCharacteristic(id: id, properties: CoreBluetoothMapping.properties(characteristic.properties)))
            }
            services.append(BluetoothService(uuid: serviceUUID, characteristics: found))
        }
        let isReady = state.withLock { state -> Bool in
            guard state.phase != .ended, state.closing == nil else { return false }
            state.phase = .ready
            state.services = services
            state.characteristics = characteristics
            return true
        }
        if isReady { ready.resolve(.success(())) }
    }

    /// The ID of a discovered characteristic, found by identity (its UUID may repeat across services).
    private static func id(
        of characteristic: CBCharacteristic, in characteristics: [BluetoothCharacteristicID: CoreBluetoothObject<CBCharacteristic>]
    ) -> BluetoothCharacteristicID? {
        characteristics.first { $0.value.object === characteristic }?.key
    }

    /// A read's answer when a read is waiting, a notification (or indication) otherwise.
    func didUpdateValue(_ characteristic: CBCharacteristic, error: (any Error)?) {
        let value = Array(characteristic.value ?? Data())
        let target = state.withLock {
            state -> (id: BluetoothCharacteristicID, read: AsyncPromise<[UInt8], TetherError>?, streams: [AsyncStream<[UInt8]>.Continuation])? in
            guard let id = Self.id(of: characteristic, in: state.characteristics) else { return nil }
            if let read = state.reads.removeValue(forKey: id) { return (id, read, []) }
            return (id, nil, state.subscriptions[id].map { Array($0.streams.values) } ?? [])
        }
        guard let target else { return }
        if let read = target.read {
            if let error {
                read.resolve(.failure(CoreBluetoothMapping.gattError(error, doing: "reading \(target.id) of \(identifier)")))
            } else {
                read.resolve(.success(value))
            }
            return
        }
        guard error == nil else { return }
        for stream in target.streams { stream.yield(value) }
    }

    func didReadRSSI(_ rssi: NSNumber, error: (any Error)?) {
        let read = state.withLock { state -> AsyncPromise<Int, TetherError>? in
            defer { state.rssiRead = nil }
            return state.rssiRead
        }
        guard let read else { return }
        if let error {
            read.resolve(.failure(CoreBluetoothMapping.gattError(error, doing: "reading the RSSI of \(identifier)")))
        } else if let value = BluetoothPeripheral.rssi(rssi.intValue) {
            read.resolve(.success(value))
        } else {
            read.resolve(.failure(TetherError(.gattOperationFailed, "CoreBluetooth measured no RSSI for \(identifier)")))
        }
    }

    func didWriteValue(_ characteristic: CBCharacteristic, error: (any Error)?) {
        let target = state.withLock { state -> (id: BluetoothCharacteristicID, write: AsyncPromise<Void, TetherError>)? in
            guard let id = Self.id(of: characteristic, in: state.characteristics), var writes = state.writes[id], !writes.isEmpty else { return nil }
            let write = writes.removeFirst()
            state.writes[id] = writes.isEmpty ? nil : writes
            return (id, write)
        }
        guard let target else { return }
        if let error {
            target.write.resolve(.failure(CoreBluetoothMapping.gattError(error, doing: "writing \(target.id) of \(identifier)")))
        } else {
            target.write.resolve(.success(()))
        }
    }

    func didUpdateNotificationState(_ characteristic: CBCharacteristic, error: (any Error)?) {
        let target = state.withLock { state -> (id: BluetoothCharacteristicID, enabling: AsyncPromise<Void, TetherError>)? in
            guard let id = Self.id(of: characteristic, in: state.characteristics), let enabling = state.subscriptions[id]?.enabling else { return nil }
            // The answer to an earlier setNotifyValue(false) is not the one awaited.
            guard error != nil || characteristic.isNotifying else { return nil }
            if error != nil {
                // Its waiters finish their own streams.
                state.subscriptions[id] = nil
            } else {
                state.subscriptions[id]?.enabling = nil
            }
            return (id, enabling)
        }
        guard let target else { return }
        if let error {
            target.enabling.resolve(.failure(CoreBluetoothMapping.gattError(error, doing: "turning on notifications of \(target.id) of \(identifier)")))
        } else {
            target.enabling.resolve(.success(()))
        }
    }

    func isReadyToSendWriteWithoutResponse() {
        let waiters = state.withLock { state in
            defer { state.sendWaiters = [] }
            return state.sendWaiters
        }
        // false: not written yet; each waiter tries again.
        for waiter in waiters { waiter.resolve(.success(false)) }
    }

    // MARK: - BluetoothConnection

    func services() async throws(TetherError) -> [BluetoothService] {
        state.withLock { $0.services }
    }

    /// The CoreBluetooth characteristic, once its properties allow `what`.
    private func target(
        _ id: BluetoothCharacteristicID, needs property: BluetoothCharacteristicProperties, for what: String
    ) async throws(TetherError)
        -> CoreBluetoothObject<CBCharacteristic>
    {
        let characteristic = try await characteristic(id)
        guard !characteristic.properties.isDisjoint(with: property) else {
            throw TetherError(
                .gattOperationNotPermitted, "\(id) of \(identifier) does not allow \(what) (it allows \(characteristic.properties.bluezFlags))")
        }
        guard let object = state.withLock({ $0.phase == .ended ? nil : $0.characteristics[id] }) else { throw disconnected }
        return object
    }

    func read(_ id: BluetoothCharacteristicID) async throws(TetherError) -> [UInt8] {
        let characteristic = try await target(id, needs: .read, for: "reading")
        let peripheral = peripheral
        let disconnected = disconnected
        let promise = await central.onQueue { [self] () -> AsyncPromise<[UInt8], TetherError> in
            let candidate = AsyncPromise<[UInt8], TetherError>()
            let (promise, send) = state.withLock { state -> (AsyncPromise<[UInt8], TetherError>, Bool) in
                if let pending = state.reads[id] { return (pending, false) }
                guard state.phase != .ended else { return (candidate, false) }
                state.reads[id] = candidate
                return (candidate, true)
            }
            if send {
                peripheral.object.readValue(for: characteristic.object)
            } else if promise === candidate {
                candidate.resolve(.failure(disconnected))
            }
            return promise
        }
        return try await promise.value { TetherError(.cancelled, "stopped waiting for a read of \(id)") }
    }

    func rssi() async throws(TetherError) -> Int {
        let peripheral = peripheral
        let identifier = identifier
        let disconnected = disconnected
        let promise = await central.onQueue { [self] () -> AsyncPromise<Int, TetherError> in
            let candidate = AsyncPromise<Int, TetherError>()
            let (promise, send) = state.withLock { state -> (AsyncPromise<Int, TetherError>, Bool) in
                if let pending = state.rssiRead { return (pending, false) }
                guard state.phase != .ended else { return (candidate, false) }
                state.rssiRead = candidate
                return (candidate, true)
            }
            if send {
                peripheral.object.readRSSI()
            } else if promise === candidate {
                candidate.resolve(.failure(disconnected))
            }
            return promise
        }
        return try await promise.value { TetherError(.cancelled, "stopped waiting for the RSSI of \(identifier)") }
    }

    func write(_ value: [UInt8], to id: BluetoothCharacteristicID, type: BluetoothWriteType) async throws(TetherError) {
        let characteristic = try await target(id, needs: type == .withResponse ? .write : .writeWithoutResponse, for: "writing \(type)")
        let data = Data(value)
        let peripheral = peripheral
        let identifier = identifier
        let disconnected = disconnected
        let cancelled: @Sendable () -> TetherError = { TetherError(.cancelled, "stopped waiting for a write of \(id)") }
        switch type {
        case .withResponse:
            let promise = AsyncPromise<Void, TetherError>()
            central.queue.async { [self] in
                let limit = peripheral.object.maximumWriteValueLength(for: .withResponse)
                guard data.count <= limit else {
                    return promise.resolve(
                        .failure(TetherError(.invalidArgument, "\(data.count) bytes are more than a write to \(identifier) carries (\(limit))")))
                }
                // Registered and sent in one block on the queue, so answers match writes in order.
                let sent = state.withLock { state -> Bool in
                    guard state.phase != .ended else { return false }
                    state.writes[id, default: []].append(promise)
                    return true
                }
                guard sent else { return promise.resolve(.failure(disconnected)) }
                peripheral.object.writeValue(data, for: characteristic.object, type: .withResponse)
            }
            try await promise.value(ifCancelled: cancelled)
        case .withoutResponse:
            // CoreBluetooth drops writes without response beyond its buffer: send only when
            // canSendWriteWithoutResponse, else wait for peripheralIsReady(toSendWriteWithoutResponse:).
            while true {
                let attempt = AsyncPromise<Bool, TetherError>()
                central.queue.async { [self] in
                    let limit = peripheral.object.maximumWriteValueLength(for: .withoutResponse)
                    guard data.count <= limit else {
                        return attempt.resolve(
                            .failure(
                                TetherError(.invalidArgument, "\(data.count) bytes are more than a write without response to \(identifier) carries (\(limit))"))
                        )
                    }
                    let canSend = peripheral.object.canSendWriteWithoutResponse
                    let waiting = state.withLock { state -> Bool? in
                        guard state.phase != .ended else { return nil }
                        if !canSend { state.sendWaiters.append(attempt) }
                        return !canSend
                    }
                    switch waiting {
                    case .none: attempt.resolve(.failure(disconnected))
                    case .some(true): break
                    case .some(false):
                        peripheral.object.writeValue(data, for: characteristic.object, type: .withoutResponse)
                        attempt.resolve(.success(true))
                    }
                }
                if try await attempt.value(ifCancelled: cancelled) { return }
            }
        }
    }

    func notifications(of id: BluetoothCharacteristicID) async throws(TetherError) -> AsyncStream<[UInt8]> {
        let characteristic = try await target(id, needs: [.notify, .indicate], for: "notifications")
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let token = state.withLock { state in
            state.nextStream += 1
            return state.nextStream
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id, token) }
        let peripheral = peripheral
        let disconnected = disconnected
        let enabled = await central.onQueue { [self] () -> AsyncPromise<Void, TetherError> in
            let candidate = AsyncPromise<Void, TetherError>()
            let (promise, enable) = state.withLock { state -> (AsyncPromise<Void, TetherError>, Bool) in
                guard state.phase != .ended else { return (candidate, false) }
                var subscription = state.subscriptions[id] ?? Subscription()
                let isNew = subscription.streams.isEmpty && subscription.enabling == nil
                subscription.streams[token] = continuation
                if isNew { subscription.enabling = candidate }
                let promise = subscription.enabling ?? candidate
                state.subscriptions[id] = subscription
                return (promise, isNew)
            }
            if enable {
                peripheral.object.setNotifyValue(true, for: characteristic.object)
            } else if promise === candidate {
                // Already on (or the link is over).
                candidate.resolve(state.withLock { $0.phase == .ended } ? .failure(disconnected) : .success(()))
            }
            return promise
        }
        switch await enabled.result(ifCancelled: { .failure(TetherError(.cancelled, "stopped turning on notifications of \(id)")) }) {
        case .success:
            return stream
        case .failure(let error):
            continuation.finish()
            throw error
        }
    }

    /// A notification stream ended: when it was the characteristic's last, notifications go off.
    private func unsubscribe(_ id: BluetoothCharacteristicID, _ token: UInt64) {
        let peripheral = peripheral
        central.queue.async { [self] in
            let turnOff = state.withLock { state -> CoreBluetoothObject<CBCharacteristic>? in
                guard state.subscriptions[id]?.streams.removeValue(forKey: token) != nil, state.subscriptions[id]?.streams.isEmpty == true else { return nil }
                state.subscriptions[id] = nil
                return state.phase == .ended ? nil : state.characteristics[id]
            }
            if let turnOff { peripheral.object.setNotifyValue(false, for: turnOff.object) }
        }
    }

    func maximumValueLength() async -> Int {
        let peripheral = peripheral
        return await central.onQueue { peripheral.object.maximumWriteValueLength(for: .withoutResponse) }
    }

    func disconnection() async throws(TetherError) -> BluetoothDisconnection {
        try await ending.value { TetherError(.cancelled, "stopped waiting for the link to end") }
    }
}
#endif

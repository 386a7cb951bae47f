#if canImport(CoreBluetooth)
import CoreBluetooth
public import Dispatch
import Foundation
public import Logging
import Synchronization
public import TetherBluetooth
public import TetherCore

/// The Bluetooth LE central on Apple platforms: a thin mapping of CoreBluetooth's
/// `CBCentralManager` and `CBPeripheral` onto ``BluetoothCentral``, so that the profiles
/// (LW003-V3, DIoT) and an app's own code run unchanged on iOS, macOS, tvOS, watchOS and visionOS.
///
/// - Peripherals are named by the UUID CoreBluetooth gives them (`CBPeripheral.identifier`), not
///   by their address, which Apple platforms hide. The UUID is stable for one device on one
///   phone or Mac, and differs between them.
/// - A scan (`scanForPeripherals(withServices:options:)`) runs while its sequence is iterated;
///   several scans share one CoreBluetooth scan for the union of their services.
/// - ``withConnection(to:options:_:)`` connects, discovers every service and every
///   characteristic, runs its closure and cancels the connection. Peripherals come from a scan
///   of this central, or else from `retrievePeripherals(withIdentifiers:)` (devices the system
///   has seen before).
///
/// An app that uses it must say why in its `Info.plist`: `NSBluetoothAlwaysUsageDescription`
/// (without it the system ends the app on first use); a sandboxed macOS app also needs the
/// `com.apple.security.device.bluetooth` entitlement.
/// The first use shows the permission prompt; until the user answers, the state is
/// ``BluetoothState/unknown``, and a refusal is ``BluetoothState/unauthorized``. Scanning in the
/// background additionally needs the `bluetooth-central` background mode and a service filter.
///
/// > Important: This module compiles only where CoreBluetooth exists (its sources are empty
/// > elsewhere), so Tether's Linux CI neither builds nor tests it; the same protocol is tested
/// > there with BlueZ and with the simulated radio of `TetherTesting`. Keep it a plain mapping.
public final class CoreBluetoothCentral: BluetoothCentral {
    /// Where CoreBluetooth delivers its callbacks and where this central calls it: a serial queue.
    let queue: DispatchQueue
    let manager: CoreBluetoothObject<CBCentralManager>
    let delegate: CoreBluetoothDelegate
    let logger: Logger

    /// How long ``scan(_:)`` waits for CoreBluetooth to report its first state (the permission
    /// prompt may be on screen).
    static let settleTimeout = Duration.seconds(30)

    /// A central that lives as long as this object, typically for the app's lifetime (keep one
    /// per app: each has its own `CBCentralManager`). Dropping it stops its scan and its links.
    ///
    /// - Parameters:
    ///   - queue: The serial queue for CoreBluetooth's callbacks; nil for a private one (not the
    ///     main queue, which is CoreBluetooth's own default).
    ///   - logger: Where the central logs (at debug level).
    public init(queue: DispatchQueue? = nil, logger: Logger = Logger(label: "tether.corebluetooth")) {
        let queue = queue ?? DispatchQueue(label: "tether.corebluetooth")
        let delegate = CoreBluetoothDelegate(logger: logger)
        self.queue = queue
        self.delegate = delegate
        self.logger = logger
        self.manager = CoreBluetoothObject(CBCentralManager(delegate: delegate, queue: queue, options: nil))
    }

    /// Creates a central, runs `body` with it and closes it: scans end, links are cancelled and
    /// state streams finish.
    public static func withCentral<Result: Sendable>(
        queue: DispatchQueue? = nil, logger: Logger = Logger(label: "tether.corebluetooth"), _ body: (CoreBluetoothCentral) async throws -> Result
    ) async throws -> Result {
        let central = CoreBluetoothCentral(queue: queue, logger: logger)
        defer { central.close() }
        return try await body(central)
    }

    deinit {
        close()
    }

    /// Ends everything running and stops accepting more.
    func close() {
        let (watchers, scans, links) = delegate.close()
        for watcher in watchers { watcher.finish() }
        for scan in scans { scan.finish(throwing: TetherError(.connectionClosed, "the central was closed during the scan")) }
        let manager = manager
        let delegate = delegate
        queue.async {
            delegate.applyScan(manager.object)
            for link in links where manager.object.state == .poweredOn { manager.object.cancelPeripheralConnection(link.peripheral.object) }
        }
        for link in links { link.ended(.other("the central was closed")) }
    }

    // MARK: - BluetoothCentral

    public func states() -> AsyncStream<BluetoothState> {
        let (stream, continuation) = AsyncStream<BluetoothState>.makeStream()
        guard let id = delegate.watchStates(continuation) else {
            continuation.finish()
            return stream
        }
        let delegate = delegate
        continuation.onTermination = { _ in delegate.unwatchStates(id) }
        return stream
    }

    public func scan(_ options: BluetoothScanOptions) async throws(TetherError) -> AsyncThrowingStream<BluetoothPeripheral, any Error> {
        try await waitUntilPoweredOn(within: Self.settleTimeout, doing: "scanning")
        let (stream, continuation) = AsyncThrowingStream<BluetoothPeripheral, any Error>.makeStream()
        let id = try delegate.addScan(options, continuation)
        let manager = manager
        let delegate = delegate
        continuation.onTermination = { [queue] _ in
            delegate.removeScan(id)
            queue.async { delegate.applyScan(manager.object) }
        }
        queue.async { delegate.applyScan(manager.object) }
        return stream
    }

    /// `retrievePeripherals(withIdentifiers:)`: identifiers are the system's UUIDs; others are
    /// left out. CoreBluetooth keeps no RSSI or advertisement for them.
    public func knownPeripherals(_ identifiers: [String]) async throws(TetherError) -> [BluetoothPeripheral] {
        try await waitUntilPoweredOn(within: Self.settleTimeout, doing: "retrieving peripherals")
        let ids = identifiers.compactMap { UUID(uuidString: $0) }
        let manager = manager
        return await onQueue {
            let found = manager.object.retrievePeripherals(withIdentifiers: ids)
            return ids.compactMap { id in
                found.first { $0.identifier == id }.map { BluetoothPeripheral(identifier: $0.identifier.uuidString, name: $0.name) }
            }
        }
    }

    public func withConnection<Result: Sendable>(
        to identifier: String, options: BluetoothConnectionOptions, _ body: (any BluetoothConnection) async throws -> Result
    ) async throws -> Result {
        try await CoreBluetoothConnection.with(self, identifier: identifier, options: options, body)
    }

    // MARK: - Helpers

    /// Returns once the state is ``BluetoothState/poweredOn``; throws the state's error if it
    /// settles on another, or ``TetherError/Code/timeout`` if CoreBluetooth says nothing in time.
    func waitUntilPoweredOn(within timeout: Duration, doing what: String) async throws(TetherError) {
        guard var current = delegate.state.withLock({ $0.closed ? nil : $0.bluetooth }) else {
            throw TetherError(.connectionClosed, "\(what): the central is closed")
        }
        if current == .unknown || current == .resetting {
            let settled = await within(timeout) { [self] in
                for await state in states() where state != .unknown && state != .resetting { return state }
                return nil
            }
            if Task.isCancelled { throw TetherError(.cancelled, "\(what): stopped waiting for Bluetooth") }
            guard let settled else { throw TetherError(.timeout, "\(what): Bluetooth did not report a usable state within \(timeout)") }
            current = settled
        }
        guard current == .poweredOn else { throw CoreBluetoothMapping.error(current, doing: what) }
    }

    /// The peripheral a scan saw, or one the system remembers.
    func peripheral(_ id: UUID) async -> CoreBluetoothObject<CBPeripheral>? {
        if let seen = delegate.state.withLock({ $0.peripherals[id] }) { return seen }
        let manager = manager
        return await onQueue { manager.object.retrievePeripherals(withIdentifiers: [id]).first.map { CoreBluetoothObject($0) } }
    }

    /// Runs `body` on the central's queue and returns its result.
    func onQueue<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}

/// A CoreBluetooth object handed between tasks. CoreBluetooth's classes are not `Sendable`;
/// Tether touches them only on the central's serial queue (where CoreBluetooth also calls the
/// delegate), which is what makes passing the reference around safe.
struct CoreBluetoothObject<Object: AnyObject>: @unchecked Sendable {
    let object: Object

    init(_ object: Object) {
        self.object = object
    }
}
#endif

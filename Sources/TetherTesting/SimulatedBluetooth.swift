import Synchronization
public import TetherBluetooth
public import TetherCore

/// An in-process Bluetooth LE radio for apps' tests: add peripherals (any
/// `BluetoothPeripheralHandler`, such as `TetherAgent.LW003Simulator`), and use ``central``
/// wherever the app takes a `BluetoothCentral`. No adapter, bus or daemon involved.
public final class SimulatedBluetooth: Sendable {
    struct State {
        var power: BluetoothState = .poweredOn
        var peripherals: [String: SimulatedPeripheral] = [:]
        var stateWatchers: [Int: AsyncStream<BluetoothState>.Continuation] = [:]
        var scanners: [Int: (options: BluetoothScanOptions, continuation: AsyncThrowingStream<BluetoothPeripheral, any Error>.Continuation)] = [:]
        var nextID = 0
    }

    let state = Mutex(State())

    public init() {}

    /// The central to hand to the code under test.
    public var central: SimulatedBluetoothCentral { SimulatedBluetoothCentral(radio: self) }

    /// Adds a peripheral that advertises `definition` at `identifier` (an address) until removed.
    @discardableResult
    public func addPeripheral(
        identifier: String, definition: BluetoothPeripheralDefinition, handler: any BluetoothPeripheralHandler, rssi: Int = -50
    ) -> SimulatedPeripheral {
        let peripheral = SimulatedPeripheral(identifier: identifier, definition: definition, handler: handler, rssi: rssi)
        let scanners = state.withLock { state in
            state.peripherals[identifier] = peripheral
            return Array(state.scanners.values)
        }
        for scanner in scanners where scanner.options.admits(peripheral.scanResult) {
            scanner.continuation.yield(peripheral.scanResult)
        }
        return peripheral
    }

    /// Stops advertising `identifier` and drops its links.
    public func removePeripheral(_ identifier: String) async {
        let peripheral = state.withLock { $0.peripherals.removeValue(forKey: identifier) }
        await peripheral?.disconnectCentrals()
    }

    /// Switches the radio on or off (or to any state): scans end, links drop.
    public func setState(_ power: BluetoothState) async {
        let (watchers, scanners, peripherals) = state.withLock { state in
            state.power = power
            return (Array(state.stateWatchers.values), power == .poweredOn ? [] : Array(state.scanners.values), Array(state.peripherals.values))
        }
        for watcher in watchers { watcher.yield(power) }
        for scanner in scanners { scanner.continuation.finish(throwing: TetherError(.bluetoothPoweredOff, "the radio is \(power)")) }
        if power != .poweredOn {
            for peripheral in peripherals { await peripheral.end(.linkLost) }
        }
    }

    func register(_ body: (inout State, Int) -> Void) -> Int {
        state.withLock { state in
            state.nextID += 1
            body(&state, state.nextID)
            return state.nextID
        }
    }
}

/// The central side of a ``SimulatedBluetooth``.
public struct SimulatedBluetoothCentral: BluetoothCentral {
    let radio: SimulatedBluetooth

    public func states() -> AsyncStream<BluetoothState> {
        let (stream, continuation) = AsyncStream<BluetoothState>.makeStream()
        let radio = radio
        let id = radio.register { state, id in
            state.stateWatchers[id] = continuation
            continuation.yield(state.power)
        }
        continuation.onTermination = { _ in _ = radio.state.withLock { $0.stateWatchers.removeValue(forKey: id) } }
        return stream
    }

    public func scan(_ options: BluetoothScanOptions) async throws(TetherError) -> AsyncThrowingStream<BluetoothPeripheral, any Error> {
        let power = radio.state.withLock { $0.power }
        guard power == .poweredOn else { throw TetherError(.bluetoothPoweredOff, "the radio is \(power)") }
        let (stream, continuation) = AsyncThrowingStream<BluetoothPeripheral, any Error>.makeStream()
        let radio = radio
        let id = radio.register { state, id in
            state.scanners[id] = (options, continuation)
            for peripheral in state.peripherals.values.sorted(by: { $0.identifier < $1.identifier })
            where options.admits(peripheral.scanResult) {
                continuation.yield(peripheral.scanResult)
            }
        }
        continuation.onTermination = { _ in _ = radio.state.withLock { $0.scanners.removeValue(forKey: id) } }
        return stream
    }

    public func knownPeripherals(_ identifiers: [String]) async throws(TetherError) -> [BluetoothPeripheral] {
        let known = radio.state.withLock { $0.peripherals }
        return identifiers.compactMap { known[$0]?.scanResult }
    }

    public func withConnection<Result: Sendable>(
        to identifier: String, options: BluetoothConnectionOptions, _ body: (any BluetoothConnection) async throws -> Result
    ) async throws -> Result {
        let (power, peripheral) = radio.state.withLock { ($0.power, $0.peripherals[identifier]) }
        guard power == .poweredOn else { throw TetherError(.bluetoothPoweredOff, "the radio is \(power)") }
        guard let peripheral else { throw TetherError(.peripheralNotFound, "no simulated peripheral \(identifier)") }
        let connection = peripheral.connect()
        do {
            let result = try await body(connection)
            await connection.end(.byApp)
            return result
        } catch {
            await connection.end(.byApp)
            throw error
        }
    }
}

/// A peripheral of a ``SimulatedBluetooth``: the device's side of its links.
public final class SimulatedPeripheral: BluetoothPeripheralLink {
    public let identifier: String
    public let definition: BluetoothPeripheralDefinition
    let handler: any BluetoothPeripheralHandler
    let rssi: Int
    private let connections = Mutex<[Int: SimulatedConnection]>([:])
    private let nextConnection = Mutex(0)
    public let maximumNotificationLength = 182

    init(identifier: String, definition: BluetoothPeripheralDefinition, handler: any BluetoothPeripheralHandler, rssi: Int) {
        self.identifier = identifier
        self.definition = definition
        self.handler = handler
        self.rssi = rssi
    }

    var scanResult: BluetoothPeripheral {
        BluetoothPeripheral(identifier: identifier, name: definition.advertisement.localName, rssi: rssi, advertisement: definition.advertisement)
    }

    func connect() -> SimulatedConnection {
        let id = nextConnection.withLock { next in
            next += 1
            return next
        }
        let connection = SimulatedConnection(peripheral: self, id: id)
        connections.withLock { $0[id] = connection }
        return connection
    }

    func forget(_ id: Int) {
        _ = connections.withLock { $0.removeValue(forKey: id) }
    }

    @discardableResult
    public func notify(_ value: [UInt8], on characteristic: BluetoothCharacteristicID) -> Bool {
        var delivered = false
        for connection in connections.withLock({ Array($0.values) }) where connection.deliver(value, on: characteristic) { delivered = true }
        return delivered
    }

    public func isNotifying(_ characteristic: BluetoothCharacteristicID) -> Bool {
        connections.withLock { Array($0.values) }.contains { $0.listens(to: characteristic) }
    }

    public func disconnectCentrals() async {
        await end(.byDevice)
    }

    func end(_ reason: BluetoothDisconnection) async {
        for connection in connections.withLock({ Array($0.values) }) { await connection.end(reason) }
    }
}

/// One central's link to a ``SimulatedPeripheral``.
final class SimulatedConnection: BluetoothConnection {
    let peripheral: SimulatedPeripheral
    let id: Int
    private let ending = AsyncPromise<BluetoothDisconnection, TetherError>()
    private let listeners = Mutex<[BluetoothCharacteristicID: [Int: AsyncStream<[UInt8]>.Continuation]]>([:])
    private let nextListener = Mutex(0)

    init(peripheral: SimulatedPeripheral, id: Int) {
        self.peripheral = peripheral
        self.id = id
    }

    var identifier: String { peripheral.identifier }

    func rssi() async throws(TetherError) -> Int {
        guard !ending.isResolved else { throw TetherError(.peripheralDisconnected, "the link to \(identifier) has ended") }
        return peripheral.rssi
    }

    func services() async throws(TetherError) -> [BluetoothService] {
        peripheral.definition.services
    }

    private func check(_ id: BluetoothCharacteristicID, allows property: BluetoothCharacteristicProperties, _ what: String) async throws(TetherError) {
        guard !ending.isResolved else { throw TetherError(.peripheralDisconnected, "\(identifier) is no longer connected") }
        let characteristic = try await characteristic(id)
        guard !characteristic.properties.isDisjoint(with: property) else {
            throw TetherError(.gattOperationNotPermitted, "\(id) of \(identifier) does not allow \(what)")
        }
    }

    func read(_ characteristic: BluetoothCharacteristicID) async throws(TetherError) -> [UInt8] {
        try await check(characteristic, allows: .read, "reading")
        return try await peripheral.handler.read(characteristic, link: peripheral)
    }

    func write(_ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType) async throws(TetherError) {
        try await check(characteristic, allows: type == .withResponse ? .write : .writeWithoutResponse, "writing \(type)")
        try await peripheral.handler.write(value, to: characteristic, type: type, link: peripheral)
    }

    func notifications(of characteristic: BluetoothCharacteristicID) async throws(TetherError) -> AsyncStream<[UInt8]> {
        try await check(characteristic, allows: [.notify, .indicate], "notifications")
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let listener = nextListener.withLock { next in
            next += 1
            return next
        }
        listeners.withLock { $0[characteristic, default: [:]][listener] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0[characteristic]?.removeValue(forKey: listener) }
        }
        await peripheral.handler.notifyingChanged(characteristic, enabled: true, link: peripheral)
        return stream
    }

    func listens(to characteristic: BluetoothCharacteristicID) -> Bool {
        listeners.withLock { !($0[characteristic]?.isEmpty ?? true) }
    }

    func deliver(_ value: [UInt8], on characteristic: BluetoothCharacteristicID) -> Bool {
        let targets = listeners.withLock { Array($0[characteristic]?.values ?? [:].values) }
        for target in targets { target.yield(value) }
        return !targets.isEmpty
    }

    func maximumValueLength() async -> Int {
        peripheral.maximumNotificationLength
    }

    func disconnection() async throws(TetherError) -> BluetoothDisconnection {
        try await ending.value { TetherError(.cancelled, "stopped waiting for the link to end") }
    }

    /// Ends the link once: streams finish, the device hears its notifications turned off.
    func end(_ reason: BluetoothDisconnection) async {
        guard !ending.isResolved else { return }
        ending.resolve(.success(reason))
        peripheral.forget(id)
        let ended = listeners.withLock { listeners in
            defer { listeners = [:] }
            return listeners
        }
        for (characteristic, streams) in ended {
            for stream in streams.values { stream.finish() }
            await peripheral.handler.notifyingChanged(characteristic, enabled: false, link: peripheral)
        }
    }
}

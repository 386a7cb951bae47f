public import TetherCore

/// A Bluetooth LE central: what the BlueZ, CoreBluetooth and simulated adapters all provide,
/// and what the profiles (LW003-V3, DIoT) are written against.
///
/// Connections are scoped: ``withConnection(to:options:_:)`` disconnects when its closure
/// returns or throws, so nothing stays connected by accident.
public protocol BluetoothCentral: Sendable {
    /// The adapter's state now, then every change, until the central is closed.
    func states() -> AsyncStream<BluetoothState>

    /// Starts scanning and returns what it finds; scanning stops when the sequence is dropped or
    /// its task cancelled. The sequence ends with a typed error if scanning stops on its own
    /// (the adapter powered off or went away).
    func scan(_ options: BluetoothScanOptions) async throws(TetherError) -> AsyncThrowingStream<BluetoothPeripheral, any Error>

    /// The peripherals among `identifiers` that the stack already knows (seen in an earlier scan,
    /// paired, or connected), without scanning: the DIoT SDK's `retrievePeripherals`. Identifiers
    /// it does not know are left out; the order is that of `identifiers`.
    func knownPeripherals(_ identifiers: [String]) async throws(TetherError) -> [BluetoothPeripheral]

    /// Connects to `identifier` (an address on BlueZ, a UUID on Apple), discovers its services,
    /// runs `body` and disconnects.
    func withConnection<Result: Sendable>(
        to identifier: String, options: BluetoothConnectionOptions, _ body: (any BluetoothConnection) async throws -> Result
    ) async throws -> Result
}

/// A link to one peripheral, with its services discovered.
public protocol BluetoothConnection: Sendable {
    /// The peripheral's identifier, as the central names it.
    var identifier: String { get }

    /// The primary services and their characteristics.
    func services() async throws(TetherError) -> [BluetoothService]

    /// Reads a characteristic's value.
    func read(_ characteristic: BluetoothCharacteristicID) async throws(TetherError) -> [UInt8]

    /// Writes a characteristic's value.
    func write(_ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType) async throws(TetherError)

    /// Turns notifications (or indications) on and returns them, one value per notification, in
    /// order; they are turned off when the sequence is dropped. The sequence ends when the link does.
    func notifications(of characteristic: BluetoothCharacteristicID) async throws(TetherError) -> AsyncStream<[UInt8]>

    /// The link's signal strength, in dBm, as the stack last measured it (CoreBluetooth reads it
    /// from the controller; BlueZ offers only the last advertisement's, and throws
    /// ``TetherError/Code/gattOperationFailed`` when it has none).
    func rssi() async throws(TetherError) -> Int

    /// The most bytes one write (or one notification) carries: the ATT MTU less 3.
    func maximumValueLength() async -> Int

    /// Waits until the link ends and says why (``TetherError/Code/cancelled`` if the waiting
    /// task is cancelled first).
    func disconnection() async throws(TetherError) -> BluetoothDisconnection
}

extension BluetoothCentral {
    /// The peripheral `identifier` if the stack knows it, without scanning.
    public func knownPeripheral(_ identifier: String) async throws(TetherError) -> BluetoothPeripheral? {
        try await knownPeripherals([identifier]).first
    }

    /// Connects with the default options (a 20 s timeout).
    public func withConnection<Result: Sendable>(to identifier: String, _ body: (any BluetoothConnection) async throws -> Result) async throws -> Result {
        try await withConnection(to: identifier, options: BluetoothConnectionOptions(), body)
    }
}

extension BluetoothConnection {
    /// The discovered characteristic, or ``TetherError/Code/gattAttributeNotFound``.
    public func characteristic(_ id: BluetoothCharacteristicID) async throws(TetherError) -> BluetoothCharacteristic {
        let services = try await services()
        guard let service = services.first(where: { $0.uuid == id.service }) else {
            throw TetherError(.gattAttributeNotFound, "the peripheral \(identifier) has no service \(id.service)")
        }
        guard let characteristic = service.characteristics.first(where: { $0.id.characteristic == id.characteristic }) else {
            throw TetherError(.gattAttributeNotFound, "the peripheral \(identifier) has no characteristic \(id)")
        }
        return characteristic
    }
}

public import TetherCore

/// What a peripheral offers: the advertisement it sends and the GATT services it serves. Platform
/// neutral, so that the same simulated device runs on BlueZ and in-process.
public struct BluetoothPeripheralDefinition: Hashable, Sendable {
    public var advertisement: BluetoothAdvertisement
    public var services: [BluetoothService]

    public init(advertisement: BluetoothAdvertisement, services: [BluetoothService]) {
        self.advertisement = advertisement
        self.services = services
    }
}

/// The device behind a peripheral: answers the reads and writes of a connected central and
/// hears when it turns notifications on or off. Errors reach the central as failed operations.
/// Each call carries the link it came through, to answer on (a write's reply is often a
/// notification).
public protocol BluetoothPeripheralHandler: Sendable {
    func read(_ characteristic: BluetoothCharacteristicID, link: any BluetoothPeripheralLink) async throws(TetherError) -> [UInt8]
    func write(
        _ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType, link: any BluetoothPeripheralLink
    ) async throws(TetherError)
    func notifyingChanged(_ characteristic: BluetoothCharacteristicID, enabled: Bool, link: any BluetoothPeripheralLink) async
}

/// What a device can do to its centrals while it serves: notify, and drop the link.
public protocol BluetoothPeripheralLink: Sendable {
    /// Sends a notification; false (and nothing sent) while no central listens to it.
    @discardableResult
    func notify(_ value: [UInt8], on characteristic: BluetoothCharacteristicID) -> Bool
    /// Whether a central listens to the characteristic's notifications.
    func isNotifying(_ characteristic: BluetoothCharacteristicID) -> Bool
    /// The most bytes one notification carries (the ATT MTU less 3).
    var maximumNotificationLength: Int { get }
    /// Ends the links of the connected centrals, as a device that drops them.
    func disconnectCentrals() async
}

public import Logging
import Synchronization
public import TetherBluetooth
import TetherCore
public import TetherDBus

/// A peripheral through BlueZ's peripheral API on one adapter: a GATT application registered
/// with `GattManager1.RegisterApplication` and an advertisement with
/// `LEAdvertisingManager1.RegisterAdvertisement`, served until the scope ends.
public final class BlueZPeripheral: BluetoothPeripheralLink {
    let bus: DBusConnection
    public let adapter: String
    let root: String
    /// Characteristic object paths by id, and which of them a central listens to.
    private let paths: [BluetoothCharacteristicID: String]
    let notifying = BlueZNotifying()
    public let maximumNotificationLength: Int
    let logger: Logger

    private init(bus: DBusConnection, adapter: String, root: String, paths: [BluetoothCharacteristicID: String], maximumNotificationLength: Int, logger: Logger)
    {
        self.bus = bus
        self.adapter = adapter
        self.root = root
        self.paths = paths
        self.maximumNotificationLength = maximumNotificationLength
        self.logger = logger
    }

    /// Registers `definition` on `adapter`, answers centrals through `handler`, runs `body`, and
    /// unregisters. `maximumNotificationLength` is what the device assumes one notification
    /// carries (BlueZ negotiates the MTU per link; 182 fits every LW003 frame).
    public static func withPeripheral<Result: Sendable>(
        adapter: String = "hci0", bus address: DBusAddress, definition: BluetoothPeripheralDefinition, handler: any BluetoothPeripheralHandler,
        maximumNotificationLength: Int = 182, logger: Logger = Logger(label: "tether.bluez.peripheral"),
        _ body: (BlueZPeripheral) async throws -> Result
    ) async throws -> Result {
        try await DBusConnection.withConnection(configuration: .init(address: address), logger: logger) { bus in
            let root = "/com/tether/peripheral"
            let adapterPath = BlueZNames.adapterPath(adapter)
            var paths: [BluetoothCharacteristicID: String] = [:]
            for (serviceIndex, service) in definition.services.enumerated() {
                let servicePath = "\(root)/service\(serviceIndex)"
                for (index, characteristic) in service.characteristics.enumerated() {
                    paths[characteristic.id] = "\(servicePath)/char\(index)"
                }
            }
            let peripheral = BlueZPeripheral(
                bus: bus, adapter: adapter, root: root, paths: paths, maximumNotificationLength: maximumNotificationLength, logger: logger)
            for (serviceIndex, service) in definition.services.enumerated() {
                let servicePath = "\(root)/service\(serviceIndex)"
                try bus.export(BlueZGATTServiceObject(uuid: service.uuid), at: servicePath)
                for characteristic in service.characteristics {
                    let object = BlueZGATTCharacteristicObject(
                        characteristic: characteristic, servicePath: servicePath, handler: handler, peripheral: peripheral)
                    try bus.export(object, at: paths[characteristic.id]!)
                }
            }
            try bus.export(BlueZAdvertisementObject(advertisement: definition.advertisement), at: "\(root)/advertisement")
            func call(_ interface: String, _ member: String, _ body: [DBusValue], doing what: String) async throws(TetherError) {
                let reply = try await bus.exchange(
                    .methodCall(destination: BlueZNames.service, path: adapterPath, interface: interface, member: member, body: body))
                if reply.kind == .error {
                    if reply.errorName == "org.freedesktop.DBus.Error.UnknownObject" || reply.errorName == "org.freedesktop.DBus.Error.UnknownMethod" {
                        throw TetherError(.bluetoothAdapterNotFound, "BlueZ has no adapter \(adapter) to \(what)")
                    }
                    throw BlueZErrors.map(reply, doing: what)
                }
            }
            try await call(BlueZNames.gattManager, "RegisterApplication", [.objectPath(root), .properties([:])], doing: "register the GATT application")
            try await call(
                BlueZNames.advertisingManager, "RegisterAdvertisement", [.objectPath("\(root)/advertisement"), .properties([:])], doing: "advertise")
            logger.info("advertising", metadata: ["adapter": "\(adapter)", "name": "\(definition.advertisement.localName ?? "")"])
            defer {
                // The objects hold the peripheral: unexported, they let it go.
                for path in paths.values { bus.unexport(path) }
                try? bus.send(
                    .methodCall(
                        destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.advertisingManager, member: "UnregisterAdvertisement",
                        body: [.objectPath("\(root)/advertisement")], flags: .noReplyExpected))
                try? bus.send(
                    .methodCall(
                        destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.gattManager, member: "UnregisterApplication",
                        body: [.objectPath(root)], flags: .noReplyExpected))
            }
            return try await body(peripheral)
        }
    }

    public func isNotifying(_ characteristic: BluetoothCharacteristicID) -> Bool {
        notifying.contains(characteristic)
    }

    @discardableResult
    public func notify(_ value: [UInt8], on characteristic: BluetoothCharacteristicID) -> Bool {
        guard isNotifying(characteristic), let path = paths[characteristic] else { return false }
        do {
            try bus.emitPropertiesChanged(path: path, interface: BlueZNames.gattCharacteristic, changed: ["Value": .bytes(value)])
            return true
        } catch {
            logger.warning("a notification could not be sent", metadata: ["characteristic": "\(characteristic)", "error": "\(error)"])
            return false
        }
    }

    public func disconnectCentrals() async {
        let adapterPath = BlueZNames.adapterPath(adapter)
        guard
            let reply = try? await bus.call(
                .methodCall(destination: BlueZNames.service, path: "/", interface: BlueZNames.objectManager, member: "GetManagedObjects"))
        else { return }
        let objects = BlueZObjects(managedObjects: reply.body)
        for (path, interfaces) in objects.interfaces where path.hasPrefix(adapterPath + "/dev_") {
            guard interfaces[BlueZNames.device]?["Connected"]?.boolValue == true else { continue }
            _ = try? await bus.exchange(.methodCall(destination: BlueZNames.service, path: path, interface: BlueZNames.device, member: "Disconnect"))
        }
        notifying.clear()
    }
}

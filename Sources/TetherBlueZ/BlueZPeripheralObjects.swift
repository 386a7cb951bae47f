import Synchronization
import TetherBluetooth
import TetherCore
import TetherDBus

/// `org.bluez.GattService1` of a registered application.
struct BlueZGATTServiceObject: DBusObject {
    let uuid: BluetoothUUID

    var interfaces: [String: [String: DBusValue]] {
        [BlueZNames.gattService: ["UUID": .string(uuid.uuidString), "Primary": .boolean(true)]]
    }

    func handle(_ call: DBusMessage) async -> DBusMessage {
        call.errorReply("org.freedesktop.DBus.Error.UnknownMethod", "a GATT service has no methods")
    }
}

/// `org.bluez.GattCharacteristic1` of a registered application: reads and writes go to the
/// device's handler, notifications are turned on and off by the central through BlueZ.
final class BlueZGATTCharacteristicObject: DBusObject {
    let characteristic: BluetoothCharacteristic
    let servicePath: String
    let handler: any BluetoothPeripheralHandler
    /// The peripheral it belongs to (unexported at the end of its scope, which ends this reference).
    let peripheral: BlueZPeripheral

    init(characteristic: BluetoothCharacteristic, servicePath: String, handler: any BluetoothPeripheralHandler, peripheral: BlueZPeripheral) {
        self.characteristic = characteristic
        self.servicePath = servicePath
        self.handler = handler
        self.peripheral = peripheral
    }

    var notifying: BlueZNotifying { peripheral.notifying }

    var interfaces: [String: [String: DBusValue]] {
        [
            BlueZNames.gattCharacteristic: [
                "UUID": .string(characteristic.id.characteristic.uuidString), "Service": .objectPath(servicePath),
                "Flags": .strings(characteristic.properties.bluezFlags),
                "Notifying": .boolean(notifying.contains(characteristic.id)),
            ]
        ]
    }

    func handle(_ call: DBusMessage) async -> DBusMessage {
        guard call.interface == BlueZNames.gattCharacteristic || call.interface == nil else {
            return call.errorReply("org.freedesktop.DBus.Error.UnknownMethod", "no method \(call.member ?? "") here")
        }
        let id = characteristic.id
        do throws(TetherError) {
            switch call.member {
            case "ReadValue":
                guard characteristic.properties.contains(.read) else { throw TetherError(.gattOperationNotPermitted, "\(id) is not readable") }
                return call.reply([.bytes(try await handler.read(id, link: peripheral))])
            case "WriteValue":
                guard let value = call.body.first?.bytesValue else { return call.errorReply("org.bluez.Error.InvalidArguments", "WriteValue takes ay, a{sv}") }
                let options = call.body.count > 1 ? call.body[1].propertiesValue ?? [:] : [:]
                let type: BluetoothWriteType = options["type"]?.stringValue == "command" ? .withoutResponse : .withResponse
                guard characteristic.properties.contains(type == .withResponse ? .write : .writeWithoutResponse) else {
                    throw TetherError(.gattOperationNotPermitted, "\(id) does not allow writes \(type)")
                }
                try await handler.write(value, to: id, type: type, link: peripheral)
                return call.reply()
            case "StartNotify", "StopNotify":
                guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
                    throw TetherError(.gattOperationNotPermitted, "\(id) does not notify")
                }
                let enabled = call.member == "StartNotify"
                notifying.set(id, enabled)
                await handler.notifyingChanged(id, enabled: enabled, link: peripheral)
                return call.reply()
            case "Confirm":
                // bluezoo (like BlueZ for indications) confirms each notification.
                return call.reply()
            default:
                return call.errorReply("org.freedesktop.DBus.Error.UnknownMethod", "no method \(call.member ?? "") on a characteristic")
            }
        } catch {
            let name = error.code == .gattOperationNotPermitted ? "org.bluez.Error.NotPermitted" : "org.bluez.Error.Failed"
            return call.errorReply(name, error.message)
        }
    }
}

/// Which characteristics a central listens to, shared by the peripheral and its objects.
final class BlueZNotifying: Sendable {
    private let ids = Mutex<Set<BluetoothCharacteristicID>>([])

    func contains(_ id: BluetoothCharacteristicID) -> Bool { ids.withLock { $0.contains(id) } }
    func set(_ id: BluetoothCharacteristicID, _ enabled: Bool) {
        ids.withLock { if enabled { $0.insert(id) } else { $0.remove(id) } }
    }
    func clear() { ids.withLock { $0 = [] } }
}

/// `org.bluez.LEAdvertisement1`: what the adapter advertises.
struct BlueZAdvertisementObject: DBusObject {
    let advertisement: BluetoothAdvertisement

    var interfaces: [String: [String: DBusValue]] {
        var properties: [String: DBusValue] = [
            "Type": .string("peripheral"),
            // Without it BlueZ (and bluezoo) advertise only while the adapter itself is discoverable.
            "Discoverable": .boolean(true),
            "ServiceUUIDs": .strings(advertisement.serviceUUIDs.map(\.uuidString)),
            "ManufacturerData": .array(
                .dictionaryEntry(key: .uint16, value: .variant),
                advertisement.manufacturerData.sorted { $0.key < $1.key }.map { .dictionaryEntry(.uint16($0.key), .variant(.bytes($0.value))) }),
            "ServiceData": .array(
                .dictionaryEntry(key: .string, value: .variant),
                advertisement.serviceData.sorted { $0.key.uuidString < $1.key.uuidString }.map {
                    .dictionaryEntry(.string($0.key.uuidString), .variant(.bytes($0.value)))
                }),
        ]
        if let name = advertisement.localName { properties["LocalName"] = .string(name) }
        return [BlueZNames.advertisement: properties]
    }

    func handle(_ call: DBusMessage) async -> DBusMessage {
        // Release: BlueZ dropped the advertisement; nothing to free.
        call.reply()
    }
}

import TetherBluetooth
import TetherDBus

/// BlueZ's objects as `GetManagedObjects` and `InterfacesAdded` describe them: paths to
/// interfaces to properties. Kept per path and updated by `PropertiesChanged`, so that a scan
/// result always carries everything known about a device, not only what just changed.
struct BlueZObjects {
    private(set) var interfaces: [String: [String: [String: DBusValue]]] = [:]
    /// Why each device's last link ended, from `Device1.Disconnected(reason, message)` (recent
    /// BlueZ sends it just before `Connected` turns false; older versions and bluezoo do not).
    private(set) var disconnections: [String: BluetoothDisconnection] = [:]

    init() {}

    /// From `GetManagedObjects`' reply body (`a{oa{sa{sv}}}`).
    init(managedObjects body: [DBusValue]) {
        guard let objects = body.first?.dictionaryValue else { return }
        for (path, value) in objects {
            guard let path = path.stringValue else { continue }
            added(path: path, value)
        }
    }

    /// `InterfacesAdded(o, a{sa{sv}})`, or one object of `GetManagedObjects`.
    mutating func added(path: String, _ value: DBusValue) {
        guard let byInterface = value.dictionaryValue else { return }
        for (name, properties) in byInterface {
            guard let name = name.stringValue, let properties = properties.propertiesValue else { continue }
            interfaces[path, default: [:]][name, default: [:]].merge(properties) { $1 }
        }
    }

    /// `InterfacesRemoved(o, as)`.
    mutating func removed(path: String, interfaces names: [String]) {
        for name in names { interfaces[path]?[name] = nil }
        if interfaces[path]?.isEmpty == true {
            interfaces[path] = nil
            disconnections[path] = nil
        }
    }

    /// `PropertiesChanged(s, a{sv}, as)` on `path`.
    mutating func changed(path: String, interface: String, changed: [String: DBusValue], invalidated: [String]) {
        guard interfaces[path]?[interface] != nil else { return }
        interfaces[path]?[interface]?.merge(changed) { $1 }
        for name in invalidated { interfaces[path]?[interface]?[name] = nil }
    }

    /// Applies a BlueZ signal; returns the path it changed, if it concerns an object.
    mutating func apply(_ signal: DBusMessage) -> String? {
        switch (signal.interface, signal.member) {
        case (BlueZNames.objectManager, "InterfacesAdded"):
            guard signal.body.count == 2, let path = signal.body[0].stringValue else { return nil }
            added(path: path, signal.body[1])
            return path
        case (BlueZNames.objectManager, "InterfacesRemoved"):
            guard signal.body.count == 2, let path = signal.body[0].stringValue, let names = signal.body[1].arrayValue else { return nil }
            removed(path: path, interfaces: names.compactMap(\.stringValue))
            return path
        case (BlueZNames.properties, "PropertiesChanged"):
            guard signal.body.count == 3, let path = signal.path, let interface = signal.body[0].stringValue,
                let changedProperties = signal.body[1].propertiesValue
            else { return nil }
            changed(path: path, interface: interface, changed: changedProperties, invalidated: signal.body[2].arrayValue?.compactMap(\.stringValue) ?? [])
            if interface == BlueZNames.device, changedProperties["Connected"]?.boolValue == true { disconnections[path] = nil }
            return path
        case (BlueZNames.device, "Disconnected"):
            guard let path = signal.path, let reason = signal.body.first?.stringValue else { return nil }
            disconnections[path] = Self.disconnection(reason: reason, message: signal.body.dropFirst().first?.stringValue)
            return path
        default:
            return nil
        }
    }

    /// `Device1.Disconnected`'s reason (`org.bluez.Reason.*`) as a disconnection. A link the
    /// local host ended is the app's (the connection tells another program's apart); a
    /// supervision timeout is a lost link.
    static func disconnection(reason: String, message: String?) -> BluetoothDisconnection {
        switch reason {
        case "org.bluez.Reason.Local": .byApp
        case "org.bluez.Reason.Remote": .byDevice
        case "org.bluez.Reason.Timeout": .linkLost
        case "org.bluez.Reason.Authentication": .authenticationFailed
        default: .other(message.map { "\(reason) (\($0.prefix(200)))" } ?? reason)
        }
    }

    func properties(_ path: String, _ interface: String) -> [String: DBusValue]? {
        interfaces[path]?[interface]
    }

    /// A device object as a scan result.
    func peripheral(at path: String) -> BluetoothPeripheral? {
        guard let device = properties(path, BlueZNames.device), let address = device["Address"]?.stringValue else { return nil }
        var advertisement = BluetoothAdvertisement()
        advertisement.localName = device["Name"]?.stringValue
        advertisement.txPower = device["TxPower"]?.integerValue.map(Int.init)
        advertisement.serviceUUIDs = (device["UUIDs"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { try? BluetoothUUID($0) } }
        for (key, value) in device["ManufacturerData"]?.dictionaryValue ?? [:] {
            guard let company = key.integerValue, let company = UInt16(exactly: company), let bytes = value.bytesValue else { continue }
            advertisement.manufacturerData[company] = bytes
        }
        for (key, value) in device["ServiceData"]?.dictionaryValue ?? [:] {
            guard let uuid = key.stringValue.flatMap({ try? BluetoothUUID($0) }), let bytes = value.bytesValue else { continue }
            advertisement.serviceData[uuid] = bytes
        }
        return BluetoothPeripheral(
            identifier: address, name: device["Name"]?.stringValue ?? device["Alias"]?.stringValue,
            rssi: BluetoothPeripheral.rssi(device["RSSI"]?.integerValue.map(Int.init)), advertisement: advertisement)
    }

    /// The GATT services under a device, with their characteristics and each one's object path.
    func gatt(under devicePath: String) -> (services: [BluetoothService], paths: [BluetoothCharacteristicID: String], mtu: Int?) {
        var services: [String: (uuid: BluetoothUUID, characteristics: [BluetoothCharacteristic])] = [:]
        for (path, byInterface) in interfaces where path.hasPrefix(devicePath + "/") {
            guard let service = byInterface[BlueZNames.gattService], service["Primary"]?.boolValue != false,
                let uuid = service["UUID"]?.stringValue.flatMap({ try? BluetoothUUID($0) })
            else { continue }
            services[path] = (uuid, [])
        }
        var paths: [BluetoothCharacteristicID: String] = [:]
        var mtu: Int?
        for (path, byInterface) in interfaces.sorted(by: { $0.key < $1.key }) where path.hasPrefix(devicePath + "/") {
            guard let characteristic = byInterface[BlueZNames.gattCharacteristic], let servicePath = characteristic["Service"]?.stringValue,
                let service = services[servicePath], let uuid = characteristic["UUID"]?.stringValue.flatMap({ try? BluetoothUUID($0) })
            else { continue }
            let id = BluetoothCharacteristicID(service: service.uuid, characteristic: uuid)
            let flags = characteristic["Flags"]?.arrayValue?.compactMap(\.stringValue) ?? []
            services[servicePath]?.characteristics.append(BluetoothCharacteristic(id: id, properties: BluetoothCharacteristicProperties(bluezFlags: flags)))
            paths[id] = path
            if let value = characteristic["MTU"]?.integerValue { mtu = max(mtu ?? 0, Int(value)) }
        }
        let ordered = services.sorted { $0.key < $1.key }.map { BluetoothService(uuid: $0.value.uuid, characteristics: $0.value.characteristics) }
        return (ordered, paths, mtu)
    }
}

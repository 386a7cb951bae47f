/// BlueZ's D-Bus names (bluez.git `doc/org.bluez.*.rst`).
enum BlueZNames {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let advertisement = "org.bluez.LEAdvertisement1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    /// `/org/bluez/hci0/dev_C8_47_8C_12_34_56` for an address on an adapter.
    static func devicePath(adapter: String, address: String) -> String {
        adapterPath(adapter) + "/dev_" + String(address.uppercased().map { $0 == ":" ? "_" : $0 })
    }

    static func adapterPath(_ adapter: String) -> String {
        "/org/bluez/" + adapter
    }
}

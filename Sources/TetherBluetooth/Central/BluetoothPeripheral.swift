/// A peripheral a scan saw: how to reach it and what it advertised.
public struct BluetoothPeripheral: Hashable, Sendable {
    /// How the central names it: the Bluetooth address (`C8:47:8C:12:34:56`) on BlueZ, the
    /// system's UUID for it on Apple platforms (which hide addresses).
    public var identifier: String
    /// The advertised name, or the name the stack remembers.
    public var name: String?
    /// The signal strength of the last advertisement, in dBm; nil when the controller had none
    /// (HCI reports ``unavailableRSSI`` then).
    public var rssi: Int?
    public var advertisement: BluetoothAdvertisement

    public init(identifier: String, name: String? = nil, rssi: Int? = nil, advertisement: BluetoothAdvertisement = BluetoothAdvertisement()) {
        self.identifier = identifier
        self.name = name
        self.rssi = rssi
        self.advertisement = advertisement
    }

    /// The RSSI value HCI (and so BlueZ and CoreBluetooth) gives when none was measured.
    public static let unavailableRSSI = 127

    /// `value` as an RSSI: nil for ``unavailableRSSI``.
    public static func rssi(_ value: Int?) -> Int? {
        value == unavailableRSSI ? nil : value
    }
}

/// What to scan for.
public struct BluetoothScanOptions: Hashable, Sendable {
    /// Only peripherals advertising one of these services (empty: every peripheral).
    public var services: [BluetoothUUID]
    /// Report every advertisement (true: RSSI and changing data follow the device), or each
    /// peripheral once per change (false).
    public var allowDuplicates: Bool

    public init(services: [BluetoothUUID] = [], allowDuplicates: Bool = false) {
        self.services = services
        self.allowDuplicates = allowDuplicates
    }

    /// Whether the filter lets `peripheral` through: it has a measured RSSI (as the MOKO and
    /// DIoT clients drop results with RSSI 127, a device the stack knows of but did not hear in
    /// this scan is not a result), and one of its advertised services (listed, or carrying
    /// service data) is among ``services``, or no services are asked for.
    public func admits(_ peripheral: BluetoothPeripheral) -> Bool {
        guard peripheral.rssi != nil else { return false }
        guard !services.isEmpty else { return true }
        let advertised = Set(peripheral.advertisement.serviceUUIDs).union(peripheral.advertisement.serviceData.keys)
        return services.contains { advertised.contains($0) }
    }
}

/// How to connect.
public struct BluetoothConnectionOptions: Hashable, Sendable {
    /// How long connecting and discovering the services may take.
    public var timeout: Duration

    public init(timeout: Duration = .seconds(20)) {
        self.timeout = timeout
    }
}

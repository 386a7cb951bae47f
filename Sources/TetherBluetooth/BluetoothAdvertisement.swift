/// What a peripheral advertised, as a central reports it: every field is optional because a
/// peripheral chooses what to put in its 31 bytes (and its scan response).
public struct BluetoothAdvertisement: Hashable, Sendable {
    /// The complete or shortened local name.
    public var localName: String?
    /// The advertised TX power level, in dBm.
    public var txPower: Int?
    /// The service UUIDs listed in the advertisement.
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier, without the identifier's two bytes.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Whether the peripheral accepts connections, when the platform says.
    public var isConnectable: Bool?

    public init(
        localName: String? = nil, txPower: Int? = nil, serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: [UInt8]] = [:],
        serviceData: [BluetoothUUID: [UInt8]] = [:], isConnectable: Bool? = nil
    ) {
        self.localName = localName
        self.txPower = txPower
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.isConnectable = isConnectable
    }
}

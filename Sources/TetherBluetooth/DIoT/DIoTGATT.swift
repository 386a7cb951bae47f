/// The GATT table of a DIoT (Daatrics) sensor (ble-profiles.md B1): which service and
/// characteristic carries what, so that a central can find them and a simulated peripheral can
/// expose them.
public enum DIoTGATT {
    /// Device Information (`180A`).
    public static let deviceInformationService = BluetoothUUID(0x180A)
    /// Manufacturer name, UTF-8 text.
    public static let manufacturerName = BluetoothUUID(0x2A29)
    /// Model number, text.
    public static let modelNumber = BluetoothUUID(0x2A24)
    /// Hardware revision, text.
    public static let hardwareRevision = BluetoothUUID(0x2A27)
    /// Firmware revision, text.
    public static let firmwareRevision = BluetoothUUID(0x2A26)
    /// Software revision, text.
    public static let softwareRevision = BluetoothUUID(0x2A28)
    /// The Device Information characteristics, in the order the clients read them.
    public static let deviceInformationCharacteristics: [BluetoothUUID] = [
        manufacturerName, modelNumber, hardwareRevision, firmwareRevision, softwareRevision,
    ]

    /// Battery (`180F`).
    public static let batteryService = BluetoothUUID(0x180F)
    /// Battery level, 1 byte percent, read and notify (``DIoTBatteryLevel``).
    public static let batteryLevel = BluetoothUUID(0x2A19)

    /// The command interface (`C000`); the Tether simulator also lists it in its advertisement.
    public static let commandService = BluetoothUUID(0xC000)
    /// `C001`: the feature table (``DIoTFeatureRecord``), requests written, replies notified.
    public static let features = BluetoothUUID(0xC001)
    /// `C002`: which feature each channel carries (``DIoTChannelRecord``).
    public static let channels = BluetoothUUID(0xC002)
    /// `C003`: how often each channel updates (``DIoTRateRecord``).
    public static let rates = BluetoothUUID(0xC003)

    /// The data interface (`D000`).
    public static let dataService = BluetoothUUID(0xD000)
    /// The channels with a data characteristic.
    public static let channelRange: ClosedRange<UInt8> = 1...9
    /// `D001`…`D009`: the live values of the features mapped to channels 1…9.
    public static let dataCharacteristics: [BluetoothUUID] = channelRange.map { BluetoothUUID(0xD000 + UInt16($0)) }

    /// The data characteristic of a channel (1…9), nil for any other.
    public static func dataCharacteristic(channel: UInt8) -> BluetoothUUID? {
        channelRange.contains(channel) ? BluetoothUUID(0xD000 + UInt16(channel)) : nil
    }

    /// The channel (1…9) a data characteristic belongs to, nil for any other UUID.
    public static func channel(ofDataCharacteristic uuid: BluetoothUUID) -> UInt8? {
        guard let short = uuid.short, short > 0xD000, short <= 0xD009 else { return nil }
        return UInt8(short - 0xD000)
    }

    /// The device identifier (`FFD0`).
    public static let identifierService = BluetoothUUID(0xFFD0)
    /// `FFD1`: the device identifier, raw bytes, read only (the Tether simulator: the 16 bytes of
    /// the advertisement, ``DIoTDeviceID``).
    public static let identifier = BluetoothUUID(0xFFD1)

    /// The longest value an attribute can have (the ATT limit): no notification is longer.
    public static let maximumAttributeLength = 512

    /// The debug console (`FF70`).
    public static let debugService = BluetoothUUID(0xFF70)
    /// `FF71`: write an ASCII command, get ASCII text back as notifications.
    public static let debugConsole = BluetoothUUID(0xFF71)
}

/// The GATT table of a MOKO LW003-V3 (ble-profiles.md A1): which service and characteristic
/// carries what, so that a central can find them and a simulated peripheral can expose them.
///
/// The custom service and its first characteristic share the UUID `AA00`; match characteristics
/// inside their service.
public enum LW003GATT {
    /// Device Information (`180A`): model, serial, firmware, hardware, software, manufacturer.
    public static let deviceInformationService = BluetoothUUID(0x180A)
    /// Model number, UTF-8 text.
    public static let modelNumber = BluetoothUUID(0x2A24)
    /// Serial number, UTF-8 text (optional: only the Android client reads it).
    public static let serialNumber = BluetoothUUID(0x2A25)
    /// Firmware revision, text.
    public static let firmwareRevision = BluetoothUUID(0x2A26)
    /// Hardware revision, text.
    public static let hardwareRevision = BluetoothUUID(0x2A27)
    /// Software revision, text.
    public static let softwareRevision = BluetoothUUID(0x2A28)
    /// Manufacturer name, text.
    public static let manufacturerName = BluetoothUUID(0x2A29)

    /// The custom service (`AA00`) holding every characteristic below.
    public static let customService = BluetoothUUID(0xAA00)
    /// `AA00`: write the login frame (``LW003Login``), get its ``LW003LoginResult`` as a notification.
    public static let login = BluetoothUUID(0xAA00)
    /// `AA01`: notifies an ``LW003DisconnectReason`` before the device drops the link.
    public static let disconnectReason = BluetoothUUID(0xAA01)
    /// `AA02`: every command and its reply (``LW003Frame``, ``LW003MultiPacketFrame``).
    public static let command = BluetoothUUID(0xAA02)
    /// `AA04`: notifies the stored scan records (``LW003StorageFrame``) after an upload request.
    public static let storage = BluetoothUUID(0xAA04)
    /// `AA05`: notifies the device log as UTF-8 text while notify is on (``LW003LogAssembler``).
    public static let log = BluetoothUUID(0xAA05)

    /// `AA0A`: the service-data UUID of the advertisement (its first byte is the device type); it
    /// is not a GATT service, but scanning for it finds the devices.
    public static let advertisedService = BluetoothUUID(0xAA0A)

    /// The characteristics of the custom service, in the order the table lists them.
    public static let customCharacteristics: [BluetoothUUID] = [login, disconnectReason, command, storage, log]
    /// The Device Information characteristics a central needs (the iOS client waits for all five).
    public static let deviceInformationCharacteristics: [BluetoothUUID] = [
        modelNumber, firmwareRevision, hardwareRevision, softwareRevision, manufacturerName,
    ]
}

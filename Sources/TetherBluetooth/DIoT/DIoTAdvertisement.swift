import TetherCore

/// What a DIoT sensor says in its advertisement (ble-profiles.md B2): its device id and its name.
///
/// Recognise one with ``init(_:)`` from any scan report; build what a simulated sensor advertises
/// with ``advertisement()`` and ``advertisingData()``.
public struct DIoTAdvertisement: Hashable, Sendable {
    /// Daatrics' Bluetooth company identifier, 1271 (`F7 04` on air).
    public static let companyIdentifier: UInt16 = 0x04F7

    /// The sensor's 16-byte identifier.
    public var deviceID: DIoTDeviceID
    /// Its local name (from the advertisement or the scan response).
    public var localName: String

    /// A sensor with this id and name.
    public init(deviceID: DIoTDeviceID, localName: String) {
        self.deviceID = deviceID
        self.localName = localName
    }

    /// Recognises a DIoT sensor in a scan report: manufacturer data of exactly 16 bytes under
    /// company `0x04F7` (what Android checks) and a local name (what iOS checks). Nil for any
    /// other device, and for a DIoT whose name has not been seen yet.
    public init?(_ advertisement: BluetoothAdvertisement) {
        guard let localName = advertisement.localName, let payload = advertisement.manufacturerData[Self.companyIdentifier],
            let deviceID = try? DIoTDeviceID(bytes: payload)
        else { return nil }
        self.init(deviceID: deviceID, localName: localName)
    }

    /// `DIoT-` and the last two id bytes in hex (`DIoT-E1F0`): the Tether simulator's name.
    public static func defaultName(deviceID: DIoTDeviceID) -> String {
        "DIoT-" + deviceID.bytes.suffix(2).tetherHex.uppercased()
    }

    /// The advertisement a simulated sensor sends (the Tether convention of B2): service `C000`
    /// listed, the device id as manufacturer data of company `0x04F7`, the name.
    public func advertisement() -> BluetoothAdvertisement {
        BluetoothAdvertisement(
            localName: localName, serviceUUIDs: [DIoTGATT.commandService], manufacturerData: [Self.companyIdentifier: deviceID.bytes], isConnectable: true)
    }

    /// The advertising-data bytes of the Tether convention: flags, the `C000` service list and the
    /// manufacturer data (`13 FF F7 04 <16 bytes>`); the name goes in the scan response.
    public func advertisingData() -> [UInt8] {
        [0x02, 0x01, 0x06, 0x03, 0x03, 0x00, 0xC0, 0x13, 0xFF, 0xF7, 0x04] + deviceID.bytes
    }
}

public import TetherCore

/// What a MOKO LW003-V3 says in its advertisement (ble-profiles.md A2): enough to list the device,
/// show its battery and climate, and know before connecting whether it asks for a password.
///
/// Recognise one with ``init(_:)`` from any scan report; build the bytes a simulated device
/// advertises with ``manufacturerPayload()`` and ``advertisement(localName:)``.
public struct LW003Advertisement: Hashable, Sendable {
    /// The company identifier the Tether simulator advertises under (`0xFFFF`, the Bluetooth SIG
    /// value for tests). Recognition never looks at the company identifier.
    public static let simulatorCompanyIdentifier: UInt16 = 0xFFFF
    /// The number of manufacturer-data bytes after the company identifier.
    public static let manufacturerPayloadLength = 15

    /// Advertised TX power, in dBm.
    public var txPower: Int8
    /// Battery charge, in percent.
    public var batteryPercent: UInt8
    /// Battery voltage, in millivolts.
    public var batteryMillivolts: UInt16
    /// Whether the device wants a password (``LW003Login``) right after connecting.
    public var passwordRequired: Bool
    /// Temperature in °C with 0.01 °C steps; nil when the device has no reading (`FFFF`).
    public var temperature: Double?
    /// Relative humidity in % with 0.01 % steps; nil when the device has no reading (`FFFF`).
    public var humidity: Double?
    /// The device's MAC address, `C8:47:8C:12:34:56`: the only way an iOS app learns it.
    public var mac: String
    /// The first byte of the `AA0A` service data; the vendors give it no meanings.
    public var deviceType: UInt8

    /// An advertisement with these values (a simulated device's, or one to compare with).
    public init(
        txPower: Int8, batteryPercent: UInt8, batteryMillivolts: UInt16, passwordRequired: Bool, temperature: Double?, humidity: Double?, mac: String,
        deviceType: UInt8 = 0
    ) {
        self.txPower = txPower
        self.batteryPercent = batteryPercent
        self.batteryMillivolts = batteryMillivolts
        self.passwordRequired = passwordRequired
        self.temperature = temperature
        self.humidity = humidity
        self.mac = mac
        self.deviceType = deviceType
    }

    /// Recognises an LW003-V3 in a scan report, as both vendor clients do: some manufacturer data
    /// of exactly 15 bytes after its company identifier (whatever the identifier), and service
    /// data under `AA0A` holding at least the device-type byte. Nil for any other device.
    public init?(_ advertisement: BluetoothAdvertisement) {
        guard let serviceData = advertisement.serviceData[LW003GATT.advertisedService], let deviceType = serviceData.first else { return nil }
        // Several manufacturer entries are possible; look at them in a stable order.
        for company in advertisement.manufacturerData.keys.sorted() {
            guard let payload = advertisement.manufacturerData[company], payload.count == Self.manufacturerPayloadLength else { continue }
            if let decoded = try? Self(manufacturerPayload: payload, deviceType: deviceType) {
                self = decoded
                return
            }
        }
        return nil
    }

    /// Decodes the 15 manufacturer-data bytes that follow the company identifier.
    ///
    /// - Throws: `TetherError(.malformedFrame)` when there are not exactly 15 bytes.
    public init(manufacturerPayload payload: [UInt8], deviceType: UInt8 = 0) throws(TetherError) {
        guard payload.count == Self.manufacturerPayloadLength else {
            throw TetherError(.malformedFrame, "LW003 manufacturer data has \(payload.count) bytes after the company id, not 15")
        }
        let temperature = UInt16(payload[5]) << 8 | UInt16(payload[6])
        let humidity = UInt16(payload[7]) << 8 | UInt16(payload[8])
        self.init(
            txPower: Int8(bitPattern: payload[0]), batteryPercent: payload[1], batteryMillivolts: UInt16(payload[2]) << 8 | UInt16(payload[3]),
            passwordRequired: payload[4] == 0x01,
            temperature: temperature == 0xFFFF ? nil : Double(Int16(bitPattern: temperature)) / 100,
            humidity: humidity == 0xFFFF ? nil : Double(humidity) / 100,
            mac: BluetoothProfileBytes.macString(payload[9..<15]), deviceType: deviceType)
    }

    /// The 15 manufacturer-data bytes after the company identifier, as a device sends them.
    ///
    /// - Throws: `TetherError(.invalidArgument)` when the MAC address is not one, or a reading
    ///   does not fit its field (temperature −327.68…327.67 °C but not −0.01, humidity
    ///   0…655.34 %).
    public func manufacturerPayload() throws(TetherError) -> [UInt8] {
        let mac = try BluetoothProfileBytes.macBytes(mac, for: "LW003 advertisement MAC")
        var payload: [UInt8] = [UInt8(bitPattern: txPower), batteryPercent]
        payload += BluetoothProfileBytes.bigEndianBytes(UInt64(batteryMillivolts), count: 2)
        payload.append(passwordRequired ? 0x01 : 0x00)
        payload += BluetoothProfileBytes.bigEndianBytes(UInt64(try Self.hundredths(temperature, range: -32768...32767, what: "temperature")), count: 2)
        payload += BluetoothProfileBytes.bigEndianBytes(UInt64(try Self.hundredths(humidity, range: 0...65535, what: "humidity")), count: 2)
        return payload + mac
    }

    /// A reading as its 16-bit field: hundredths, or `FFFF` for none (so the one reading whose
    /// field would be `FFFF` cannot be sent).
    private static func hundredths(_ value: Double?, range: ClosedRange<Int>, what: String) throws(TetherError) -> UInt16 {
        guard let value else { return 0xFFFF }
        let scaled = (value * 100).rounded()
        guard scaled.isFinite, scaled >= Double(range.lowerBound), scaled <= Double(range.upperBound),
            case let field = UInt16(truncatingIfNeeded: Int(scaled)), field != 0xFFFF
        else {
            throw TetherError(.invalidArgument, "LW003 \(what) \(value) does not fit the advertisement")
        }
        return field
    }

    /// The advertisement a simulated device sends (the Tether convention of A2): service `AA0A`
    /// listed, service data `AA0A` = the device type, the manufacturer data under
    /// ``simulatorCompanyIdentifier``, and the local name (the scan response's).
    public func advertisement(localName: String? = nil) throws(TetherError) -> BluetoothAdvertisement {
        BluetoothAdvertisement(
            localName: localName ?? Self.defaultName(mac: mac), serviceUUIDs: [LW003GATT.advertisedService],
            manufacturerData: [Self.simulatorCompanyIdentifier: try manufacturerPayload()], serviceData: [LW003GATT.advertisedService: [deviceType]],
            isConnectable: true)
    }

    /// The 31 advertising-data bytes of the Tether convention: flags, the `AA0A` service list,
    /// the `AA0A` service data and the manufacturer data (company `0xFFFF`).
    public func advertisingData() throws(TetherError) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x03, 0x03, 0x0A, 0xAA, 0x04, 0x16, 0x0A, 0xAA, deviceType, 0x12, 0xFF, 0xFF, 0xFF] + (try manufacturerPayload())
    }

    /// `LW003-` and the last two MAC bytes in hex (`LW003-3456`): the name a device has until
    /// someone renames it (command `0x30`).
    public static func defaultName(mac: String) -> String {
        let digits = MACAddress.hexDigits(mac)?.uppercased() ?? ""
        return "LW003-" + digits.suffix(4)
    }
}

import NIOCore
public import TetherCore

/// The body of a discovery response (`0x0004`) and a start-up announcement (`0x0005`):
/// who the device is (`shared/reference/gizwits-lan.md` §4.2).
public struct GizwitsDeviceInfo: Hashable, Sendable {
    /// Device ID; empty when the device has not registered with a cloud yet.
    public var did: String
    /// The 6-byte MAC address.
    public var mac: [UInt8]
    /// Firmware version text, e.g. `04020006`.
    public var firmwareVersion: String
    /// The product key of the device's product (32 ASCII characters on GAgent).
    public var productKey: String
    /// 8 opaque bytes from the MCU.
    public var mcuAttributes: [UInt8]
    /// Any bytes after `mcu_attr` (newer firmware appends NUL-terminated strings); kept, not interpreted.
    public var trailer: [UInt8]

    /// Device info as given; when written, `mcuAttributes` is cut or zero-padded to 8 bytes.
    public init(
        did: String, mac: [UInt8], firmwareVersion: String, productKey: String, mcuAttributes: [UInt8] = Array(repeating: 0, count: 8), trailer: [UInt8] = []
    ) {
        self.did = did
        self.mac = mac
        self.firmwareVersion = firmwareVersion
        self.productKey = productKey
        self.mcuAttributes = mcuAttributes
        self.trailer = trailer
    }

    /// `ac:cf:23:50:d4:46`
    public var macString: String { MACAddress.display(mac) }

    init(payload: ByteBuffer) throws(TetherError) {
        var buffer = payload
        guard let did = buffer.gizwitsReadLengthPrefixedBytes(),
            let mac = buffer.gizwitsReadLengthPrefixedBytes(),
            let firmware = buffer.gizwitsReadLengthPrefixedBytes(),
            let productKey = buffer.gizwitsReadLengthPrefixedBytes(),
            let attributes = buffer.readBytes(length: 8)
        else {
            throw TetherError(.malformedFrame, "device info of \(payload.readableBytes) bytes is truncated")
        }
        self.init(
            did: String(decoding: did, as: UTF8.self),
            mac: mac,
            firmwareVersion: String(decoding: firmware, as: UTF8.self),
            productKey: String(decoding: productKey, as: UTF8.self),
            mcuAttributes: attributes,
            trailer: buffer.readBytes(length: buffer.readableBytes) ?? []
        )
    }

    func write(to buffer: inout ByteBuffer) {
        buffer.gizwitsWriteLengthPrefixed(Array(did.utf8))
        buffer.gizwitsWriteLengthPrefixed(mac)
        buffer.gizwitsWriteLengthPrefixed(Array(firmwareVersion.utf8))
        buffer.gizwitsWriteLengthPrefixed(Array(productKey.utf8))
        var attributes = Array(mcuAttributes.prefix(8))
        attributes += Array(repeating: 0, count: 8 - attributes.count)
        buffer.writeBytes(attributes)
        buffer.writeBytes(trailer)
    }
}

/// The answer to `0x0013` (`shared/reference/gizwits-lan.md` §7).
public struct GizwitsHardwareInfo: Hashable, Sendable {
    static let fixedFieldsLength = 48

    /// The Wi-Fi module's hardware version (`wifi_hard_ver`), up to 8 ASCII characters.
    public var wifiHardwareVersion: String
    /// The Wi-Fi module's software version (`wifi_soft_ver`), up to 8 ASCII characters.
    public var wifiSoftwareVersion: String
    /// The MCU's hardware version (`mcu_hard_ver`), up to 8 ASCII characters.
    public var mcuHardwareVersion: String
    /// The MCU's software version (`mcu_soft_ver`), up to 8 ASCII characters.
    public var mcuSoftwareVersion: String
    /// The P0 protocol version the MCU reports (`p0_ver`), up to 8 ASCII characters.
    public var p0Version: String
    /// The Wi-Fi firmware ID (`wifi_firmware_id`), up to 8 ASCII characters; empty on GAgent 04020006.
    public var wifiFirmwareID: String
    /// Unreliable on GAgent 04020006, which copies it from the wrong buffer.
    public var wifiFirmwareVersion: String
    /// The product key of the device's product.
    public var productKey: String

    /// Hardware info as given; when written, the six version fields are cut to 8 ASCII characters
    /// and `wifiFirmwareVersion` to 32.
    public init(
        wifiHardwareVersion: String, wifiSoftwareVersion: String, mcuHardwareVersion: String, mcuSoftwareVersion: String,
        p0Version: String, wifiFirmwareID: String = "", wifiFirmwareVersion: String, productKey: String
    ) {
        self.wifiHardwareVersion = wifiHardwareVersion
        self.wifiSoftwareVersion = wifiSoftwareVersion
        self.mcuHardwareVersion = mcuHardwareVersion
        self.mcuSoftwareVersion = mcuSoftwareVersion
        self.p0Version = p0Version
        self.wifiFirmwareID = wifiFirmwareID
        self.wifiFirmwareVersion = wifiFirmwareVersion
        self.productKey = productKey
    }

    init(payload: ByteBuffer) throws(TetherError) {
        var buffer = payload
        func field() -> String? {
            guard let bytes = buffer.readBytes(length: 8) else { return nil }
            return Self.ascii(bytes)
        }
        guard let wifiHard = field(), let wifiSoft = field(), let mcuHard = field(), let mcuSoft = field(),
            let p0 = field(), let firmwareID = field(),
            let firmware = buffer.gizwitsReadLengthPrefixedBytes(),
            let productKey = buffer.gizwitsReadLengthPrefixedBytes()
        else {
            throw TetherError(.malformedFrame, "hardware info of \(payload.readableBytes) bytes is truncated")
        }
        self.init(
            wifiHardwareVersion: wifiHard, wifiSoftwareVersion: wifiSoft, mcuHardwareVersion: mcuHard, mcuSoftwareVersion: mcuSoft,
            p0Version: p0, wifiFirmwareID: firmwareID,
            wifiFirmwareVersion: Self.ascii(firmware),
            productKey: String(decoding: productKey, as: UTF8.self)
        )
    }

    func write(to buffer: inout ByteBuffer) {
        for text in [wifiHardwareVersion, wifiSoftwareVersion, mcuHardwareVersion, mcuSoftwareVersion, p0Version, wifiFirmwareID] {
            let bytes = Self.asciiBytes(text, limit: 8)
            buffer.writeBytes(bytes + Array(repeating: 0, count: 8 - bytes.count))
        }
        buffer.gizwitsWriteLengthPrefixed(Self.asciiBytes(wifiFirmwareVersion, limit: 32))
        buffer.gizwitsWriteLengthPrefixed(Array(productKey.utf8))
    }

    /// The version fields are NUL-padded ASCII; other bytes read as `?`, so a field keeps its
    /// length through a round trip.
    static func ascii(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != 0 }.map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    static func asciiBytes(_ text: String, limit: Int) -> [UInt8] {
        Array(text.unicodeScalars.prefix(limit).map { $0.isASCII ? UInt8($0.value) : UInt8(ascii: "?") })
    }

    /// The keys the Gizwits SDK uses for hardware info (`wifiHardVersion`, …).
    public var jsonValue: JSONValue {
        .object([
            "wifiHardVersion": .string(wifiHardwareVersion), "wifiSoftVersion": .string(wifiSoftwareVersion),
            "mcuHardVersion": .string(mcuHardwareVersion), "mcuSoftVersion": .string(mcuSoftwareVersion),
            "p0Version": .string(p0Version), "wifiFirmwareId": .string(wifiFirmwareID),
            "wifiFirmwareVer": .string(wifiFirmwareVersion), "productKey": .string(productKey),
        ])
    }
}

/// One entry of the Wi-Fi hotspot list (`0x000D`).
public struct GizwitsHotspot: Hashable, Sendable {
    /// The network's name (SSID).
    public var ssid: String
    /// Signal strength as the module reports it (0–100 on GAgent).
    public var rssi: UInt8

    /// An entry as given.
    public init(ssid: String, rssi: UInt8) {
        self.ssid = ssid
        self.rssi = rssi
    }
}

public import TetherCore

/// `WifiAuthMode` (unknown values kept: newer ESP-IDF added WPA3).
public struct ESPWiFiAuthMode: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let open = Self(rawValue: 0)
    public static let wep = Self(rawValue: 1)
    public static let wpaPSK = Self(rawValue: 2)
    public static let wpa2PSK = Self(rawValue: 3)
    public static let wpaWPA2PSK = Self(rawValue: 4)
    public static let wpa2Enterprise = Self(rawValue: 5)
    public static let wpa3PSK = Self(rawValue: 6)
    public static let wpa2WPA3PSK = Self(rawValue: 7)
}

/// One network the device heard (`WiFiScanResult`).
public struct ESPWiFiNetwork: Sendable, Hashable {
    public var ssid: [UInt8]
    public var channel: Int
    public var rssi: Int
    public var bssid: [UInt8]
    public var auth: ESPWiFiAuthMode

    public init(ssid: [UInt8], channel: Int, rssi: Int, bssid: [UInt8], auth: ESPWiFiAuthMode) {
        self.ssid = ssid
        self.channel = channel
        self.rssi = rssi
        self.bssid = bssid
        self.auth = auth
    }
}

/// One `prov-scan` message (`wifi_scan.proto`), both directions: the device's list of Wi-Fi
/// networks before the user chooses one.
public enum ESPWiFiScanMessage: Sendable, Hashable {
    case start(blocking: Bool, passive: Bool = false, groupChannels: Int = 0, periodMilliseconds: Int = 0)
    case startResponse(status: ESPStatus)
    case status
    case statusResponse(status: ESPStatus, finished: Bool, count: Int)
    case results(startIndex: Int, count: Int)
    case resultsResponse(status: ESPStatus, networks: [ESPWiFiNetwork])

    public func encoded() -> [UInt8] {
        var message = ProtobufWriter()
        var inner = ProtobufWriter()
        switch self {
        case .start(let blocking, let passive, let groups, let period):
            inner.varint(1, blocking ? 1 : 0)
            inner.varint(2, passive ? 1 : 0)
            inner.varint(3, UInt64(truncatingIfNeeded: groups))
            inner.varint(4, UInt64(truncatingIfNeeded: period))
            message.lengthDelimited(10, inner.bytes, always: true)
        case .startResponse(let status):
            message.varint(1, 1)
            message.varint(2, status.rawValue)
            message.lengthDelimited(11, [], always: true)
        case .status:
            message.varint(1, 2)
            message.lengthDelimited(12, [], always: true)
        case .statusResponse(let status, let finished, let count):
            message.varint(1, 3)
            message.varint(2, status.rawValue)
            inner.varint(1, finished ? 1 : 0)
            inner.varint(2, UInt64(truncatingIfNeeded: count))
            message.lengthDelimited(13, inner.bytes, always: true)
        case .results(let start, let count):
            message.varint(1, 4)
            inner.varint(1, UInt64(truncatingIfNeeded: start))
            inner.varint(2, UInt64(truncatingIfNeeded: count))
            message.lengthDelimited(14, inner.bytes, always: true)
        case .resultsResponse(let status, let networks):
            message.varint(1, 5)
            message.varint(2, status.rawValue)
            for network in networks {
                var entry = ProtobufWriter()
                entry.lengthDelimited(1, network.ssid)
                entry.varint(2, UInt64(truncatingIfNeeded: network.channel))
                entry.varint(3, UInt64(bitPattern: Int64(network.rssi)))
                entry.lengthDelimited(4, network.bssid)
                entry.varint(5, network.auth.rawValue)
                inner.lengthDelimited(1, entry.bytes, always: true)
            }
            message.lengthDelimited(15, inner.bytes, always: true)
        }
        return message.bytes
    }

    public init(decoding bytes: [UInt8]) throws(TetherError) {
        let message = try ProtobufFields(bytes)
        let status = ESPStatus(wire: message.varint(2))
        func inner(_ field: Int) throws(TetherError) -> ProtobufFields { try ProtobufFields(message.bytes(field) ?? []) }
        switch message.varint(1) {
        case 0:
            let body = try inner(10)
            self = .start(
                blocking: body.varint(1) != 0, passive: body.varint(2) != 0, groupChannels: Int(truncatingIfNeeded: body.varint(3)),
                periodMilliseconds: Int(truncatingIfNeeded: body.varint(4)))
        case 1: self = .startResponse(status: status)
        case 2: self = .status
        case 3:
            let body = try inner(13)
            self = .statusResponse(status: status, finished: body.varint(1) != 0, count: Int(truncatingIfNeeded: body.varint(2)))
        case 4:
            let body = try inner(14)
            self = .results(startIndex: Int(truncatingIfNeeded: body.varint(1)), count: Int(truncatingIfNeeded: body.varint(2)))
        case 5:
            let body = try inner(15)
            var networks: [ESPWiFiNetwork] = []
            for entry in body.all(1) {
                let fields = try ProtobufFields(entry)
                networks.append(
                    ESPWiFiNetwork(
                        ssid: fields.bytes(1) ?? [], channel: Int(truncatingIfNeeded: fields.varint(2)),
                        rssi: Int(truncatingIfNeeded: Int64(bitPattern: fields.varint(3))),
                        bssid: fields.bytes(4) ?? [], auth: ESPWiFiAuthMode(rawValue: fields.varint(5))))
            }
            self = .resultsResponse(status: status, networks: networks)
        default:
            throw TetherError(.malformedFrame, "WiFiScanPayload message type \(message.varint(1))")
        }
    }
}

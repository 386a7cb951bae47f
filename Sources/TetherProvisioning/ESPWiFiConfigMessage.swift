public import TetherCore

/// `WifiStationState` (`wifi_constants.proto`).
public enum ESPWiFiStationState: UInt64, Sendable, Hashable {
    case connected = 0
    case connecting = 1
    case disconnected = 2
    case connectionFailed = 3
}

/// `WifiConnectFailedReason`.
public enum ESPWiFiFailReason: UInt64, Sendable, Hashable {
    case authError = 0
    case networkNotFound = 1
}

/// Why a join failed where `WifiConnectFailedReason` has no word for it (Tether extension, field
/// 100 of `RespGetStatus`, which ESP-IDF's clients skip as an unknown field): sent with the
/// state `disconnected`, as an ESP-IDF device that did not join shows it.
public enum ESPTetherFailDetail: UInt64, Sendable, Hashable {
    /// The router would not let the device join (association refused).
    case joinRefused = 1
    /// Joined, but no address came from DHCP.
    case dhcpTimeout = 2
}

/// `RespGetStatus`: where the device is in joining the network.
public struct ESPWiFiStatus: Sendable, Hashable {
    /// `WifiConnectedState`: the address the router gave, and the network.
    public struct Connected: Sendable, Hashable {
        public var ipv4: String
        public var ssid: [UInt8]
        public var channel: Int

        public init(ipv4: String = "", ssid: [UInt8] = [], channel: Int = 0) {
            self.ipv4 = ipv4
            self.ssid = ssid
            self.channel = channel
        }
    }

    public var status: ESPStatus
    public var state: ESPWiFiStationState
    public var failReason: ESPWiFiFailReason?
    /// Present when the device sent its connection's details.
    public var connected: Connected?
    /// While connecting (newer ESP-IDF): attempts left.
    public var attemptsRemaining: Int?
    /// A Tether device's reason for not having joined, beyond ESP-IDF's two.
    public var tetherFailDetail: ESPTetherFailDetail?

    public init(
        status: ESPStatus = .success, state: ESPWiFiStationState, failReason: ESPWiFiFailReason? = nil, connected: Connected? = nil,
        attemptsRemaining: Int? = nil, tetherFailDetail: ESPTetherFailDetail? = nil
    ) {
        self.status = status
        self.state = state
        self.failReason = failReason
        self.connected = connected
        self.attemptsRemaining = attemptsRemaining
        self.tetherFailDetail = tetherFailDetail
    }

    /// The device's address, when connected.
    public var ipv4: String? { connected?.ipv4 }
}

/// One `prov-config` message (`wifi_config.proto`), both directions, dispatched on `msg` as the
/// device does (clients send ApplyConfig as `msg = 4` alone, GetStatus as `52 00` or nothing).
public enum ESPWiFiConfigMessage: Sendable, Hashable {
    case getStatus
    case getStatusResponse(ESPWiFiStatus)
    case setConfig(ssid: [UInt8], passphrase: [UInt8], bssid: [UInt8] = [], channel: Int = 0)
    case setConfigResponse(status: ESPStatus)
    case applyConfig
    case applyConfigResponse(status: ESPStatus)

    public func encoded() -> [UInt8] {
        var message = ProtobufWriter()
        var inner = ProtobufWriter()
        switch self {
        case .getStatus:
            message.lengthDelimited(10, [], always: true)
        case .getStatusResponse(let status):
            message.varint(1, 1)
            inner.varint(1, status.status.rawValue)
            inner.varint(2, status.state.rawValue)
            if let reason = status.failReason { inner.varint(10, reason.rawValue, always: true) }
            if let details = status.connected {
                var connected = ProtobufWriter()
                connected.lengthDelimited(1, Array(details.ipv4.utf8))
                connected.lengthDelimited(3, details.ssid)
                connected.varint(5, UInt64(bitPattern: Int64(details.channel)))
                inner.lengthDelimited(11, connected.bytes, always: true)
            }
            if let attempts = status.attemptsRemaining {
                var failed = ProtobufWriter()
                failed.varint(1, UInt64(truncatingIfNeeded: attempts))
                inner.lengthDelimited(12, failed.bytes, always: true)
            }
            if let detail = status.tetherFailDetail { inner.varint(100, detail.rawValue, always: true) }
            message.lengthDelimited(11, inner.bytes, always: true)
        case .setConfig(let ssid, let passphrase, let bssid, let channel):
            message.varint(1, 2)
            inner.lengthDelimited(1, ssid)
            inner.lengthDelimited(2, passphrase)
            inner.lengthDelimited(3, bssid)
            inner.varint(4, UInt64(truncatingIfNeeded: channel))
            message.lengthDelimited(12, inner.bytes, always: true)
        case .setConfigResponse(let status):
            message.varint(1, 3)
            inner.varint(1, status.rawValue)
            message.lengthDelimited(13, inner.bytes, always: true)
        case .applyConfig:
            message.varint(1, 4)
        case .applyConfigResponse(let status):
            message.varint(1, 5)
            inner.varint(1, status.rawValue)
            message.lengthDelimited(15, inner.bytes, always: true)
        }
        return message.bytes
    }

    public init(decoding bytes: [UInt8]) throws(TetherError) {
        let message = try ProtobufFields(bytes)
        func inner(_ field: Int) throws(TetherError) -> ProtobufFields { try ProtobufFields(message.bytes(field) ?? []) }
        switch message.varint(1) {
        case 0: self = .getStatus
        case 1:
            let body = try inner(11)
            var status = ESPWiFiStatus(
                status: ESPStatus(wire: body.varint(1)), state: ESPWiFiStationState(rawValue: body.varint(2)) ?? .disconnected)
            if body.has(10) { status.failReason = ESPWiFiFailReason(rawValue: body.varint(10)) ?? .authError }
            if let connected = body.bytes(11) {
                let fields = try ProtobufFields(connected)
                status.connected = .init(
                    ipv4: String(decoding: fields.bytes(1) ?? [], as: UTF8.self), ssid: fields.bytes(3) ?? [],
                    channel: Int(truncatingIfNeeded: Int64(bitPattern: fields.varint(5))))
            }
            if let attempt = body.bytes(12) { status.attemptsRemaining = Int(truncatingIfNeeded: try ProtobufFields(attempt).varint(1)) }
            if body.has(100) { status.tetherFailDetail = ESPTetherFailDetail(rawValue: body.varint(100)) }
            self = .getStatusResponse(status)
        case 2:
            let body = try inner(12)
            self = .setConfig(
                ssid: body.bytes(1) ?? [], passphrase: body.bytes(2) ?? [], bssid: body.bytes(3) ?? [], channel: Int(truncatingIfNeeded: body.varint(4)))
        case 3: self = .setConfigResponse(status: ESPStatus(wire: try inner(13).varint(1)))
        case 4: self = .applyConfig
        case 5: self = .applyConfigResponse(status: ESPStatus(wire: try inner(15).varint(1)))
        default: throw TetherError(.malformedFrame, "WiFiConfigPayload message type \(message.varint(1))")
        }
    }
}

public import NIOCore
public import TetherCore

/// A GAgent LAN frame with its payload parsed, one case per command of the protocol
/// (`shared/reference/gizwits-lan.md` §3). P0 payloads stay bytes here; ``P0Codec`` reads them
/// against a product's model.
public enum GizwitsLANMessage: Hashable, Sendable {
    /// 0x0001: Wi-Fi credentials for a device in SoftAP mode.
    ///
    /// `pairingToken` is Tether's extension: `tokenLen u16 BE · token` after the key, which
    /// GAgent firmware leaves unread; nil when absent.
    case softAPConfiguration(ssid: String, key: String, pairingToken: String? = nil)
    /// 0x0002
    case softAPConfigurationAck

    /// The longest pairing token `0x0001` carries (Tether's tokens are 32 characters).
    public static let maximumPairingToken = 128
    /// 0x0003
    case discoveryRequest
    /// 0x0004
    case discoveryResponse(GizwitsDeviceInfo)
    /// 0x0005: start-up announcement to UDP 2415.
    case announcement(GizwitsDeviceInfo)
    /// 0x0006
    case passcodeRequest
    /// 0x0007: nil when the device refused (it is not in its binding window).
    case passcodeResponse(String?)
    /// 0x0008: the passcode, or a ``LANGrant``'s text (Tether's extension).
    case login(passcode: String)
    /// 0x0009
    case loginResult(GizwitsLoginResult)
    /// 0x000A (not implemented by GAgent 04020006)
    case firmwareInfoRequest
    /// 0x000C
    case hotspotListRequest
    /// 0x000D
    case hotspotList([GizwitsHotspot])
    /// 0x0013
    case hardwareInfoRequest
    /// 0x0014
    case hardwareInfo(GizwitsHardwareInfo)
    /// 0x0015
    case heartbeat
    /// 0x0016
    case heartbeatReply
    /// 0x0017
    case productionTestRequest
    /// 0x0018
    case productionTestAck
    /// 0x0019: configuration-success announcement to UDP 2415.
    case configurationSuccess(mac: [UInt8], productKey: String, did: String)
    /// 0x0090: P0 to the device, no acknowledgement.
    case p0ToDevice(ByteBuffer)
    /// 0x0091: P0 from the device (reply or report), no acknowledgement.
    case p0FromDevice(ByteBuffer)
    /// 0x0093: P0 that asks for an acknowledgement carrying the same `sn`.
    case p0WithAck(sn: UInt32, p0: ByteBuffer)
    /// 0x0094: the acknowledgement of a 0x0093; `p0` may be empty.
    case p0Ack(sn: UInt32, p0: ByteBuffer)
    /// A command this library does not know (0x0010 log, vendor extensions), kept as it came.
    case other(GizwitsLANCommand, ByteBuffer)

    /// The command word this message travels with.
    public var command: GizwitsLANCommand {
        switch self {
        case .softAPConfiguration: return .softAPConfiguration
        case .softAPConfigurationAck: return .softAPConfigurationAck
        case .discoveryRequest: return .discoveryRequest
        case .discoveryResponse: return .discoveryResponse
        case .announcement: return .announcement
        case .passcodeRequest: return .passcodeRequest
        case .passcodeResponse: return .passcodeResponse
        case .login: return .login
        case .loginResult: return .loginResult
        case .firmwareInfoRequest: return .firmwareInfoRequest
        case .hotspotListRequest: return .hotspotListRequest
        case .hotspotList: return .hotspotList
        case .hardwareInfoRequest: return .hardwareInfoRequest
        case .hardwareInfo: return .hardwareInfo
        case .heartbeat: return .heartbeat
        case .heartbeatReply: return .heartbeatReply
        case .productionTestRequest: return .productionTestRequest
        case .productionTestAck: return .productionTestAck
        case .configurationSuccess: return .configurationSuccess
        case .p0ToDevice: return .p0ToDevice
        case .p0FromDevice: return .p0FromDevice
        case .p0WithAck: return .p0WithAck
        case .p0Ack: return .p0Ack
        case .other(let command, _): return command
        }
    }

    /// Parses a frame's payload by its command. Throws `TetherError.Code.malformedFrame` when
    /// the payload does not have the command's shape. Bytes after a complete body are ignored,
    /// as GAgent ignores them.
    public init(frame: GizwitsLANFrame) throws(TetherError) {
        var payload = frame.payload
        func truncated() -> TetherError {
            TetherError(.malformedFrame, "\(frame.command) payload of \(frame.payload.readableBytes) bytes is truncated")
        }
        switch frame.command {
        case .softAPConfiguration:
            guard let ssid = payload.gizwitsReadLengthPrefixedBytes(), let key = payload.gizwitsReadLengthPrefixedBytes() else {
                throw truncated()
            }
            // Tether's token, when what follows the key is one; other trailing bytes are left
            // unread, as GAgent does.
            var token: String?
            if payload.readableBytes > 2, let bytes = payload.gizwitsReadLengthPrefixedBytes(), (1...Self.maximumPairingToken).contains(bytes.count) {
                token = String(decoding: bytes, as: UTF8.self)
            }
            self = .softAPConfiguration(ssid: String(decoding: ssid, as: UTF8.self), key: String(decoding: key, as: UTF8.self), pairingToken: token)
        case .softAPConfigurationAck: self = .softAPConfigurationAck
        case .discoveryRequest: self = .discoveryRequest
        case .discoveryResponse: self = .discoveryResponse(try GizwitsDeviceInfo(payload: payload))
        case .announcement: self = .announcement(try GizwitsDeviceInfo(payload: payload))
        case .passcodeRequest: self = .passcodeRequest
        case .passcodeResponse:
            guard let passcode = payload.gizwitsReadLengthPrefixedBytes() else { throw truncated() }
            self = .passcodeResponse(passcode.isEmpty ? nil : String(decoding: passcode, as: UTF8.self))
        case .login:
            guard let passcode = payload.gizwitsReadLengthPrefixedBytes() else { throw truncated() }
            self = .login(passcode: String(decoding: passcode, as: UTF8.self))
        case .loginResult:
            guard let result = payload.readInteger(as: UInt8.self) else { throw truncated() }
            self = .loginResult(GizwitsLoginResult(rawValue: result))
        case .firmwareInfoRequest: self = .firmwareInfoRequest
        case .hotspotListRequest: self = .hotspotListRequest
        case .hotspotList:
            var hotspots: [GizwitsHotspot] = []
            while payload.readableBytes > 0 {
                guard let ssid = payload.gizwitsReadLengthPrefixedBytes(), let rssi = payload.readInteger(as: UInt8.self) else {
                    throw truncated()
                }
                hotspots.append(GizwitsHotspot(ssid: String(decoding: ssid, as: UTF8.self), rssi: rssi))
            }
            self = .hotspotList(hotspots)
        case .hardwareInfoRequest: self = .hardwareInfoRequest
        case .hardwareInfo: self = .hardwareInfo(try GizwitsHardwareInfo(payload: payload))
        case .heartbeat: self = .heartbeat
        case .heartbeatReply: self = .heartbeatReply
        case .productionTestRequest: self = .productionTestRequest
        case .productionTestAck: self = .productionTestAck
        case .configurationSuccess:
            guard let mac = payload.gizwitsReadLengthPrefixedBytes(), let productKey = payload.gizwitsReadLengthPrefixedBytes(),
                let did = payload.gizwitsReadLengthPrefixedBytes()
            else { throw truncated() }
            self = .configurationSuccess(mac: mac, productKey: String(decoding: productKey, as: UTF8.self), did: String(decoding: did, as: UTF8.self))
        case .p0ToDevice: self = .p0ToDevice(payload)
        case .p0FromDevice: self = .p0FromDevice(payload)
        case .p0WithAck:
            guard let sn = payload.readInteger(as: UInt32.self) else { throw truncated() }
            self = .p0WithAck(sn: sn, p0: payload)
        case .p0Ack:
            guard let sn = payload.readInteger(as: UInt32.self) else { throw truncated() }
            self = .p0Ack(sn: sn, p0: payload)
        default:
            self = .other(frame.command, payload)
        }
    }

    /// Reads one frame from a stream and parses it; nil on partial input.
    public static func read(
        from buffer: inout ByteBuffer, maximumLength: Int = GizwitsLANFrame.defaultMaximumFrameLength
    ) throws(TetherError) -> GizwitsLANMessage? {
        guard let frame = try GizwitsLANFrame.read(from: &buffer, maximumLength: maximumLength) else { return nil }
        return try GizwitsLANMessage(frame: frame)
    }

    /// The frame that carries this message.
    public var frame: GizwitsLANFrame {
        var payload = ByteBuffer()
        switch self {
        case .softAPConfiguration(let ssid, let key, let token):
            payload.gizwitsWriteLengthPrefixed(Array(ssid.utf8))
            payload.gizwitsWriteLengthPrefixed(Array(key.utf8))
            if let token { payload.gizwitsWriteLengthPrefixed(Array(token.utf8)) }
        case .discoveryResponse(let info), .announcement(let info):
            info.write(to: &payload)
        case .passcodeResponse(let passcode):
            payload.gizwitsWriteLengthPrefixed(Array((passcode ?? "").utf8))
        case .login(let passcode):
            payload.gizwitsWriteLengthPrefixed(Array(passcode.utf8))
        case .loginResult(let result):
            payload.writeInteger(result.rawValue)
        case .hotspotList(let hotspots):
            for hotspot in hotspots {
                payload.gizwitsWriteLengthPrefixed(Array(hotspot.ssid.utf8))
                payload.writeInteger(hotspot.rssi)
            }
        case .hardwareInfo(let info):
            info.write(to: &payload)
        case .configurationSuccess(let mac, let productKey, let did):
            payload.gizwitsWriteLengthPrefixed(mac)
            payload.gizwitsWriteLengthPrefixed(Array(productKey.utf8))
            payload.gizwitsWriteLengthPrefixed(Array(did.utf8))
        case .p0ToDevice(let p0), .p0FromDevice(let p0):
            payload = p0
        case .p0WithAck(let sn, let p0), .p0Ack(let sn, let p0):
            payload.writeInteger(sn)
            var p0 = p0
            payload.writeBuffer(&p0)
        case .other(_, let bytes):
            payload = bytes
        case .softAPConfigurationAck, .discoveryRequest, .passcodeRequest, .firmwareInfoRequest, .hotspotListRequest,
            .hardwareInfoRequest, .heartbeat, .heartbeatReply, .productionTestRequest, .productionTestAck:
            break
        }
        return GizwitsLANFrame(command: command, payload: payload)
    }
}

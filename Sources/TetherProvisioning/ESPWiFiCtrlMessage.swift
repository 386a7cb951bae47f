public import TetherCore

/// One `prov-ctrl` message (`wifi_ctrl.proto`): after a failed join, the app resets the device's
/// provisioning state (to send other credentials) or asks it to provision again.
public enum ESPWiFiCtrlMessage: Sendable, Hashable {
    case reset
    case resetResponse(status: ESPStatus)
    case reprovision
    case reprovisionResponse(status: ESPStatus)

    public func encoded() -> [UInt8] {
        var message = ProtobufWriter()
        switch self {
        case .reset:
            message.varint(1, 1)
            message.lengthDelimited(11, [], always: true)
        case .resetResponse(let status):
            message.varint(1, 2)
            message.varint(2, status.rawValue)
            message.lengthDelimited(12, [], always: true)
        case .reprovision:
            message.varint(1, 3)
            message.lengthDelimited(13, [], always: true)
        case .reprovisionResponse(let status):
            message.varint(1, 4)
            message.varint(2, status.rawValue)
            message.lengthDelimited(14, [], always: true)
        }
        return message.bytes
    }

    public init(decoding bytes: [UInt8]) throws(TetherError) {
        let message = try ProtobufFields(bytes)
        let status = ESPStatus(wire: message.varint(2))
        switch message.varint(1) {
        case 1: self = .reset
        case 2: self = .resetResponse(status: status)
        case 3: self = .reprovision
        case 4: self = .reprovisionResponse(status: status)
        default: throw TetherError(.malformedFrame, "WiFiCtrlPayload message type \(message.varint(1))")
        }
    }
}

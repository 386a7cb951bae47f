import ArgumentParser
import NIOCore
import Tether
import TetherCLISupport

struct LANDecode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one GAgent frame, or a bare P0 payload, and print it as JSON.",
        discussion: """
            HEX is a whole frame (00 00 00 03 | len | flag | cmd | payload) or, without that \
            header, a P0 payload starting with its action byte. Spaces and colons are ignored. \
            Prints {"cmd", "sn" (when present), "action", "data", "alerts", "faults"}, with numbers \
            scaled by ratio and addition; "cmd" is absent for a bare P0 payload.
            """
    )

    @Option(name: .long, help: "Product model file (Gizwits data points or Aliyun TSL).")
    var product: String?

    @Argument(help: "The bytes, in hexadecimal.")
    var hex: [String]

    func run() async throws {
        guard let bytes = [UInt8](tetherHex: hex.joined()), !bytes.isEmpty else {
            throw ValidationError("HEX must be hexadecimal bytes")
        }
        let codec = try product.map { try P0Codec(model: loadProduct($0)) }
        printJSON(try Self.decode(bytes, codec: codec))
    }

    static func decode(_ bytes: [UInt8], codec: P0Codec?) throws -> JSONValue {
        guard bytes.starts(with: [0, 0, 0, 3]) else {
            var object = JSONObject()
            try describeP0(ByteBuffer(bytes: bytes), codec: codec, into: &object)
            return .object(object)
        }
        let frame = try GizwitsLANFrame.read(datagram: ByteBuffer(bytes: bytes), maximumLength: GizwitsLANFrame.maximumLength)
        let message = try GizwitsLANMessage(frame: frame)
        var object: JSONObject = ["cmd": .int(Int64(frame.command.rawValue))]
        switch message {
        case .p0ToDevice(let p0), .p0FromDevice(let p0):
            try describeP0(p0, codec: codec, into: &object)
        case .p0WithAck(let sn, let p0), .p0Ack(let sn, let p0):
            object["sn"] = .int(Int64(sn))
            if p0.readableBytes == 0 {
                object["action"] = .string(message.command.name)
                object["data"] = .object([:])
            } else {
                try describeP0(p0, codec: codec, into: &object)
            }
        default:
            object["action"] = .string(message.command.name)
            object["data"] = fields(of: message)
        }
        return .object(object)
    }

    private static func describeP0(_ p0: ByteBuffer, codec: P0Codec?, into object: inout JSONObject) throws {
        guard let codec else {
            throw ValidationError("this frame carries P0 data points: name the product with --product")
        }
        let message = try codec.decode(p0)
        let action = P0Action(rawValue: p0.getInteger(at: p0.readerIndex, as: UInt8.self) ?? 0)
        object["action"] = .string(action.name)
        switch message {
        case .control(let values):
            object["data"] = DeviceStatus(data: values).jsonValue["data"]
        case .read(let names):
            object["data"] = .object([:])
            if !names.isEmpty { object["points"] = .array(names.map { .string($0) }) }
        case .readAck(let status), .report(let status):
            object["data"] = status.jsonValue["data"]
            object["alerts"] = status.jsonValue["alerts"]
            object["faults"] = status.jsonValue["faults"]
        case .transparentToDevice(let bytes), .transparentFromDevice(let bytes):
            object["data"] = .object([:])
            object["binary"] = .string(bytes.tetherHex)
        }
    }

    private static func fields(of message: GizwitsLANMessage) -> JSONValue {
        switch message {
        case .discoveryResponse(let info), .announcement(let info):
            return .object([
                "did": .string(info.did), "mac": .string(info.macString), "firmwareVersion": .string(info.firmwareVersion),
                "productKey": .string(info.productKey), "mcuAttributes": .string(info.mcuAttributes.tetherHex),
            ])
        case .configurationSuccess(let mac, let productKey, let did):
            return .object(["mac": .string(mac.map { [$0].tetherHex }.joined(separator: ":")), "productKey": .string(productKey), "did": .string(did)])
        case .softAPConfiguration(let ssid, let key, let token):
            // The key and the token are secrets: show only the key's length and whether a token came.
            return .object(["ssid": .string(ssid), "keyLength": .int(Int64(key.utf8.count)), "pairingToken": .bool(token != nil)])
        case .passcodeResponse(let passcode):
            return .object(["granted": .bool(passcode != nil)])
        case .login(let passcode):
            // Neither the passcode nor a grant is shown; only which of the two it was.
            return .object(["grant": .bool(LANGrant.isGrant(passcode))])
        case .loginResult(let result):
            var object: JSONObject = ["success": .bool(result.isSuccess)]
            if !result.isSuccess { object["reason"] = .string(result.description) }
            return .object(object)
        case .hotspotList(let hotspots):
            return .object(["hotspots": .array(hotspots.map { .object(["ssid": .string($0.ssid), "rssi": .int(Int64($0.rssi))]) })])
        case .hardwareInfo(let info):
            return info.jsonValue
        case .other(_, let payload):
            return .object(["payload": .string(Array(payload.readableBytesView).tetherHex)])
        default:
            return .object([:])
        }
    }
}

import NIOCore
import TetherAlink
import TetherCore

extension FuzzTargets {
    private static let lamp: ThingModel = try! Fixtures.lamp()

    /// Alink payloads (requests, replies, the channel's envelope), topics, client ids and Base64 payload text from arbitrary bytes: whatever parses must
    /// round-trip, and nothing may crash.
    public static func alink(_ bytes: [UInt8]) -> String? {
        if let request = try? AlinkRequest(parsing: bytes) {
            guard let again = try? AlinkRequest(parsing: request.bytes), again == request else { return "an Alink request changed on a round trip" }
            _ = lamp.checkAlinkProperties(request.params)
        }
        if let request = try? ChannelRequest(parsing: bytes) {
            guard let again = try? ChannelRequest(parsing: request.bytes), again == request else { return "a channel request changed on a round trip" }
        }
        if let request = try? AlinkRequest(parsing: bytes) {
            if let signIns = try? SubDeviceMessages.signIns(request) {
                guard (try? SubDeviceMessages.signIns(SubDeviceMessages.topoAdd(id: "1", signIns))) == signIns else {
                    return "sub-device sign-ins changed on a round trip"
                }
            }
            _ = try? SubDeviceMessages.identities(request)
        }
        if let reply = try? AlinkReply(parsing: bytes) {
            _ = try? SubDeviceMessages.devices(reply.data)
            guard let again = try? AlinkReply(parsing: reply.bytes), again == reply else { return "an Alink reply changed on a round trip" }
        }
        if let request = try? ShadowRequest(parsing: bytes) {
            guard let again = try? ShadowRequest(parsing: request.bytes), again == request else { return "a shadow request changed on a round trip" }
            if case .update(let update) = request { _ = try? DeviceShadow(reported: ["a": 1], version: 3).applying(update, by: .device, atSeconds: 1) }
        }
        if let reply = try? ShadowReply(parsing: bytes) {
            var now: Int64 = 0
            if case .document(let shadow) = reply { now = shadow.timestamp }
            if case .control(let shadow) = reply { now = shadow.timestamp }
            guard let again = try? ShadowReply(parsing: reply.bytes(atSeconds: now)), again == reply else { return "a shadow reply changed on a round trip" }
        }
        if let report = try? FirmwareVersionReport(parsing: bytes) {
            guard let again = try? FirmwareVersionReport(parsing: report.bytes), again == report else { return "an OTA version report changed on a round trip" }
        }
        if let report = try? FirmwareProgressReport(parsing: bytes) {
            guard let again = try? FirmwareProgressReport(parsing: report.bytes), again == report else { return "an OTA progress report changed on a round trip" }
        }
        if let query = try? FirmwareQuery(parsing: bytes) {
            guard let again = try? FirmwareQuery(parsing: query.bytes), again == query else { return "an OTA firmware query changed on a round trip" }
        }
        if let notice = try? FirmwareUpgradeNotice(parsing: bytes) {
            guard let again = try? FirmwareUpgradeNotice(parsing: notice.bytes), again == notice else { return "an upgrade notice changed on a round trip" }
        }
        for type in [AlinkRegistrationType.register, .regnwl] { _ = try? AlinkDynamicRegistration.answer(ByteBuffer(bytes: bytes), type: type) }
        let text = String(decoding: bytes, as: UTF8.self)
        if let topic = AlinkDeviceTopic(parsing: text) {
            guard AlinkDeviceTopic(parsing: topic.name) == topic else { return "an Alink topic changed on a round trip: \(text)" }
        }
        if let decoded = [UInt8](tetherBase64: text), decoded.tetherBase64 != text {
            return "Base64 text that decodes is not the encoding of what it decodes to: \(text)"
        }
        if let clientID = AlinkClientID(parsing: text), !clientID.fields.isEmpty {
            guard AlinkClientID(parsing: clientID.description) == clientID else { return "an Alink client id changed on a round trip: \(text)" }
        }
        return nil
    }

    public static let alinkSeeds: [[UInt8]] = [
        #"{"id":"1","version":"1.0","params":{"LightSwitch":1,"Brightness":{"value":40,"time":1}},"method":"thing.event.property.post"}"#,
        #"{"id":"7","code":200,"data":{},"message":"success"}"#,
        #"{"id":"3","system":{"version":"1.0","time":"1795318066000"},"request":{},"params":{"iotToken":"t"},"method":"thing.topo.add"}"#,
        #"{"id":12,"code":460,"data":{"Brightness":"out of range"},"message":"bad"}"#,
        #"{"id":1,"params":{"version":"1.0.1","module":"mcu"}}"#,
        #"{"id":"4","params":{"step":"-3","desc":"sign mismatch","module":"default"}}"#,
        #"{"code":"1000","data":{"url":"http://127.0.0.1/ota/firmware/1?expires=1&signature=ab","version":"2.0","size":10,"signMethod":"Md5","sign":"0123456789abcdef0123456789abcdef"},"id":"9","message":"success"}"#,
        "/ota/device/upgrade/a1PK000001/dev01",
        #"{"id":"4","params":{"signMethod":"hmacSha256","deviceList":[{"productKey":"a1PK000001","deviceName":"s","clientId":"c","timestamp":"1","cleanSession":"false","sign":"00"}]}}"#,
        "/ext/session/a1PK000001/dev01/combine/batch_login",
        "/sys/a1PK000001/dev01/thing/event/property/post",
        "/sys/a1PK000001/dev01/thing/service/Reboot_reply",
        "/ext/rrpc/42/sys/a1PK000001/dev01/thing/service/Reboot",
        "/a1PK000001/dev01/user/update",
        "/ext/rrpc/1795318066000123/a1PK000001/dev01/user/get",
        "/sys/a1PK000001/dev01/rrpc/response/1795318066000123",
        "/shadow/update/a1PK000001/dev01",
        #"{"method":"update","state":{"reported":{"color":"red","old":"null"},"desired":"null"},"version":4}"#,
        #"{"method":"delete","state":{"reported":{"color":"null"}},"version":5}"#,
        #"{"method":"control","payload":{"status":"success","state":{"reported":{"a":1},"desired":{"a":2}},"metadata":{"reported":{"a":{"timestamp":9}}}},"version":7,"timestamp":9}"#,
        #"{"method":"reply","payload":{"status":"error","content":{"errorcode":"409","errormessage":"conflict"}},"timestamp":1}"#,
        "aGVsbG8gZGV2aWNl",
        "a1PK000001&dev01|securemode=3,signmethod=hmacsha1,ext=1,_ss=1,lan=Python,_v=1.2.13,timestamp=1795318066|",
    ].map { Array($0.utf8) }
}

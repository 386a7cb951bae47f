import Testing
import TetherAlink

@Suite("Alink topics (shared/reference/alink-mqtt.md §3)")
struct AlinkTopicTests {
    let device = try! AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "dev01")

    @Test("every topic kind reads back from its name", arguments: [
        ("/sys/a1PK000001/dev01/thing/event/property/post", AlinkTopic.propertyPost),
        ("/sys/a1PK000001/dev01/thing/event/property/post_reply", .propertyPostReply),
        ("/sys/a1PK000001/dev01/thing/service/property/set", .propertySet),
        ("/sys/a1PK000001/dev01/thing/service/property/set_reply", .propertySetReply),
        ("/sys/a1PK000001/dev01/thing/service/property/get", .propertyGet),
        ("/sys/a1PK000001/dev01/thing/event/Alarm/post", .eventPost("Alarm")),
        ("/sys/a1PK000001/dev01/thing/event/Alarm/post_reply", .eventPostReply("Alarm")),
        ("/sys/a1PK000001/dev01/thing/service/Reboot", .service("Reboot")),
        ("/sys/a1PK000001/dev01/thing/service/Reboot_reply", .serviceReply("Reboot")),
        ("/sys/a1PK000001/dev01/thing/model/up_raw", .upRaw),
        ("/sys/a1PK000001/dev01/thing/model/down_raw_reply", .downRawReply),
        ("/sys/a1PK000001/dev01/rrpc/request/1234", .rrpcRequest("1234")),
        ("/sys/a1PK000001/dev01/rrpc/response/1234", .rrpcResponse("1234")),
        ("/sys/a1PK000001/dev01/thing/deviceinfo/update", .system("thing/deviceinfo/update")),
        ("/a1PK000001/dev01/user/update/error", .user("update/error")),
        ("/ota/device/inform/a1PK000001/dev01", .firmwareInform),
        ("/ota/device/progress/a1PK000001/dev01", .firmwareProgress),
        ("/ota/device/upgrade/a1PK000001/dev01", .firmwareUpgrade),
        ("/sys/a1PK000001/dev01/thing/ota/firmware/get", .firmwareGet),
        ("/sys/a1PK000001/dev01/thing/ota/firmware/get_reply", .firmwareGetReply),
        ("/ext/session/a1PK000001/dev01/combine/batch_login", .session("combine/batch_login")),
        ("/ext/session/a1PK000001/dev01/combine/batch_logout_reply", .session("combine/batch_logout_reply")),
        ("/sys/a1PK000001/dev01/thing/topo/add", .system("thing/topo/add")),
    ])
    func roundTrip(name: String, topic: AlinkTopic) throws {
        let parsed = try #require(AlinkDeviceTopic(parsing: name))
        #expect(parsed.device == device)
        #expect(parsed.topic == topic)
        #expect(parsed.name == name)
    }

    @Test("service calls through custom RRPC keep their message id")
    func rrpc() throws {
        let parsed = try #require(AlinkDeviceTopic(parsing: "/ext/rrpc/998/sys/a1PK000001/dev01/thing/service/Reboot"))
        #expect(parsed.rrpcMessageID == "998")
        #expect(parsed.topic == .service("Reboot"))
        #expect(parsed.name == "/ext/rrpc/998/sys/a1PK000001/dev01/thing/service/Reboot")
    }

    @Test("custom RRPC on the device's own user topics keeps its message id too")
    func userRRPC() throws {
        let parsed = try #require(AlinkDeviceTopic(parsing: "/ext/rrpc/1795318066000123/a1PK000001/dev01/user/get/state"))
        #expect(parsed.rrpcMessageID == "1795318066000123")
        #expect(parsed.device == device)
        #expect(parsed.topic == .user("get/state"))
        #expect(parsed.name == "/ext/rrpc/1795318066000123/a1PK000001/dev01/user/get/state")
    }

    @Test("topics of no device are not device topics", arguments: [
        "", "/", "/sys", "/sys/a1PK000001", "/sys/a1PK000001/dev01", "sys/a1PK000001/dev01/thing/event/property/post",
        "/a1PK000001/dev01/other/x", "/a1PK000001/dev01/user/", "/sys/a+b/dev01/thing/event/property/post",
        "/ext/rrpc//sys/a1PK000001/dev01/thing/service/x", "/ext/register", "/ext/rrpc/7", "/ext/rrpc/7/a1PK000001/dev01/other/x",
        "/ext/rrpc/7/a1PK000001/dev01/user/", "/ota/device/inform/a1PK000001", "/ota/device/inform/a1PK000001/dev01/x",
        "/ota/device/other/a1PK000001/dev01", "/ext/rrpc/7/ota/device/inform/a1PK000001/dev01", "/ota/device/upgrade/a1PK000001/",
        "/ext/session/a1PK000001/dev01", "/ext/session/a1PK000001/dev01/", "/ext/session/a1PK000001/dev01/combine/#", "/ext/session/a+/dev01/x",
    ])
    func notDeviceTopics(name: String) {
        #expect(AlinkDeviceTopic(parsing: name) == nil)
    }

    @Test("requests know their reply topic")
    func replies() {
        #expect(AlinkTopic.propertySet.reply == .propertySetReply)
        #expect(AlinkTopic.service("Reboot").reply == .serviceReply("Reboot"))
        #expect(AlinkTopic.eventPost("Alarm").reply == .eventPostReply("Alarm"))
        #expect(AlinkTopic.propertySetReply.reply == nil)
        #expect(AlinkTopic.system("account/bind").reply == .system("account/bind_reply"))
        #expect(AlinkTopic.system("account/bind_reply").reply == nil)
        #expect(AlinkTopic.rrpcRequest("1").reply == nil && AlinkTopic.shadowUpdate.reply == nil)
        #expect(AlinkTopic.session("combine/login").reply == .session("combine/login_reply") && AlinkTopic.session("combine/login_reply").reply == nil)
        #expect(AlinkTopic.firmwareGet.reply == .firmwareGetReply && AlinkTopic.firmwareInform.reply == nil && AlinkTopic.firmwareProgress.reply == nil)
    }
}

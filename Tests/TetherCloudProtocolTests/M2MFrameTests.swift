import Testing
import TetherCloudProtocol
import TetherCore

@Suite("M2M frames")
struct M2MFrameTests {
    /// The reference's examples (gizwits-openapi.md §4.2), read as what they are.
    @Test(
        "the reference's examples read as the frames they show",
        arguments: [
            (
                #"{"cmd":"login_req","data":{"appid":"app0001","uid":"uid0001","token":"tok0001","p0_type":"attrs_v4","heartbeat_interval":180,"auto_subscribe":false}}"#,
                M2MFrame.login(M2MLogin(appID: "app0001", uid: "uid0001", token: "tok0001", heartbeatInterval: 180, autoSubscribe: false))
            ),
            (#"{"cmd":"login_res","data":{"success":true}}"#, .loginResult(M2MLoginResult(success: true))),
            (#"{"cmd":"subscribe_req","data":[{"did":"did0000000000000000001"}]}"#, .subscribe(dids: ["did0000000000000000001"])),
            (
                #"{"cmd":"subscribe_res","data":{"success":[{"did":"did0000000000000000001","error_code":0,"msg":"ok"}],"failed":[]}}"#,
                .subscribeResult(M2MSubscribeResult(success: [.init(did: "did0000000000000000001")], failed: []))
            ),
            (
                #"{"cmd":"c2s_write","req_sn":12,"data":{"did":"did0000000000000000001","attrs":{"LED_OnOff":true,"LED_R":10}}}"#,
                .write(M2MWrite(sequence: .number(12), did: "did0000000000000000001", attrs: ["LED_OnOff": true, "LED_R": 10]))
            ),
            (
                #"{"cmd":"s2c_ack","res_sn":12,"did":"did0000000000000000001"}"#,
                .writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(12), did: "did0000000000000000001"))
            ),
            (
                #"{"cmd":"s2c_noti","res_sn":12,"data":{"did":"did0000000000000000001","attrs":{"LED_OnOff":true,"LED_R":10}}}"#,
                .notification(M2MNotification(answering: .number(12), did: "did0000000000000000001", attrs: ["LED_OnOff": true, "LED_R": 10]))
            ),
            (
                #"{"cmd":"s2c_noti","req_sn":3,"data":{"did":"did0000000000000000001","attrs":{"Alert_2":true}}}"#,
                .notification(M2MNotification(request: .number(3), did: "did0000000000000000001", attrs: ["Alert_2": true]))
            ),
            (
                #"{"cmd":"c2s_ack","res_sn":3,"did":"did0000000000000000001"}"#,
                .acknowledge(M2MAcknowledgement(sequence: .number(3), did: "did0000000000000000001"))
            ),
            (
                #"{"cmd":"c2s_raw","data":{"did":"did0000000000000000001","raw":[0,0,0,3,4,0,0,144,2]}}"#,
                .raw(M2MRaw(did: "did0000000000000000001", bytes: [0, 0, 0, 3, 4, 0, 0, 144, 2]))
            ),
            (#"{"cmd":"ping"}"#, .ping),
            (#"{"cmd":"pong"}"#, .pong),
        ])
    func referenceExamples(text: String, frame: M2MFrame) throws {
        #expect(try M2MFrame(decoding: text) == frame)
    }

    static let everyKind: [M2MFrame] = [
        .login(M2MLogin(appID: "a", uid: "u", token: "t", dataFormat: .custom, heartbeatInterval: nil, autoSubscribe: true)),
        .subscribe(dids: ["d1", "d2"]),
        .write(M2MWrite(sequence: .text("x-1"), did: "d", attrs: ["bin": [1, 2, 255], "mode": "eco", "level": .double(2.5)], queueTTL: 60)),
        .read(M2MRead(sequence: .number(9), did: "d", names: ["a", "b"])),
        .read(M2MRead(did: "d")),
        .raw(M2MRaw(did: "d", bytes: [], queueTTL: 5)),
        .acknowledge(M2MAcknowledgement(sequence: nil, did: nil)),
        .ping, .pong,
        .loginResult(M2MLoginResult(success: false, errorCode: 9004, message: "token invalid")),
        .subscribeResult(M2MSubscribeResult(success: [], failed: [.init(did: nil, errorCode: 9017, message: "device not bound")])),
        .writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(1), did: "d", commandID: 42)),
        .notification(M2MNotification(answering: .number(1), commandID: 42, did: "d", attrs: [:])),
        .invalid(M2MInvalid(sequence: .number(7), commandID: 3, errorCode: 9042, message: "device offline", did: "d")),
        .invalid(M2MInvalid(errorCode: 9015, message: "bad")),
        .onlineStatus(M2MOnlineStatus(did: "d", passcode: "PASSCODEAB", mac: "accf2350d446", online: true)),
        .bindingChanged(did: "d", bound: false),
        .rawReport(M2MRaw(did: "d", bytes: [0, 0, 0, 3])),
        .event(M2MEvent(did: "d", identifier: "Overheat", type: "alert", values: ["Temperature": .double(88.5)], timestamp: 1_700_000_000_000)),
        .userTopic(M2MUserTopic(did: "d", topic: "/pk/dn/user/update", payload: [0, 1, 255], timestamp: 1_700_000_000_000)),
        .upgrade(
            FirmwareUpgradeBody(commandID: 9, did: "d", state: "acknowledged", firmwareID: 3, version: "2.0.1", module: "mcu", step: 40, desc: "downloading")),
        .upgrade(FirmwareUpgradeBody(commandID: 9, did: "d", state: "failed", firmwareID: 3, version: "2.0.1", module: "default", step: -3, updatedAt: 1)),
        .upgrade(FirmwareUpgradeBody(commandID: 9, did: "d", state: "queued", firmwareID: 3, version: "2.0.1", module: "default")),
        .message(
            MessageBody(
                id: 4, type: 1, status: .unread, content: "alice shared Lamp with you", data: ["event": "invited", "sharing_id": 7], createdAt: 1, updatedAt: 1)
        ),
        .pairing(PairingStatusBody(id: "pt_1", state: .bound, did: "d", productKey: "pk", role: "owner", expireAt: 1)),
        .pairing(PairingStatusBody(id: "pt_2", state: .refused, did: "d", errorCode: 9516, message: "another product", expireAt: 1)),
        .schedules(ScheduleChangeBody(id: "sc_1", change: .created, did: "d")), .schedules(ScheduleChangeBody(id: "sc_2", change: .deleted, did: nil)),
    ]

    @Test("every kind of frame reads back as written", arguments: everyKind)
    func roundTrip(frame: M2MFrame) throws {
        #expect(try M2MFrame(decoding: frame.encoded()) == frame)
        #expect(frame.json["cmd"]?.stringValue == frame.command)
    }

    @Test(
        "malformed frames are typed errors that name the field and keep the req_sn",
        arguments: [
            ("", M2MFrameError.Kind.notAFrame, ""),
            ("[]", .notAFrame, ""),
            (#"{"data":{}}"#, .missingField, "cmd"),
            (#"{"cmd":7}"#, .wrongType, "cmd"),
            (#"{"cmd":"teleport"}"#, .unknownCommand, "teleport"),
            (#"{"cmd":"c2s_write","req_sn":4,"data":{"did":"d"}}"#, .missingField, "attrs"),
            (#"{"cmd":"c2s_write","req_sn":4,"data":{"did":"d","attrs":[1]}}"#, .wrongType, "attrs"),
            (#"{"cmd":"c2s_raw","data":{"did":"d","raw":[256]}}"#, .wrongType, "raw"),
            (#"{"cmd":"c2s_raw","data":{"did":"d","raw":[-1]}}"#, .wrongType, "raw"),
            (#"{"cmd":"login_req","data":{"appid":"a","uid":"u","token":"t","p0_type":"binary"}}"#, .wrongType, "p0_type"),
            (#"{"cmd":"subscribe_req","data":{"did":"d"}}"#, .wrongType, "data"),
            (#"{"cmd":"subscribe_req","data":[{}]}"#, .missingField, "did"),
            (#"{"cmd":"c2s_read","req_sn":1,"data":{"did":"d","names":"all"}}"#, .wrongType, "names"),
            (#"{"cmd":"s2c_invalid_msg","data":{"msg":"no code"}}"#, .missingField, "error_code"),
            (
                #"{"cmd":"s2c_upgrade","data":{"command_id":1,"did":"d","state":"sent","firmware_id":2,"version":"2","module":"m","step":101}}"#, .wrongType,
                "step"
            ),
            (#"{"cmd":"s2c_upgrade","data":{"did":"d"}}"#, .wrongType, "command_id"),
            (#"{"cmd":"s2c_message","data":{"id":1,"type":1,"status":7,"content":"c"}}"#, .wrongType, "status"),
            (#"{"cmd":"s2c_message","data":7}"#, .wrongType, "data"),
        ])
    func malformed(text: String, kind: M2MFrameError.Kind, names: String) {
        do {
            _ = try M2MFrame(decoding: text)
            Issue.record("read \(text)")
        } catch {
            #expect(error.kind == kind, "\(error)")
            #expect(error.message.contains(names), "\(error.message)")
            if text.contains("\"req_sn\":4") { #expect(error.sequence == .number(4)) }
        }
    }

    @Test("a frame over the limit is refused before it is parsed")
    func tooLong() {
        let text = #"{"cmd":"ping","pad":""# + String(repeating: "x", count: M2MFrame.maximumLength) + #""}"#
        #expect(throws: M2MFrameError.self) { try M2MFrame(decoding: text) }
        #expect((try? M2MFrame(decoding: text, maximumLength: text.utf8.count)) == .ping)
    }

    @Test("arbitrary text, and mutations of real frames, are read or refused, never a crash (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_123)
        let seeds = Self.everyKind.map { Array($0.encoded().utf8) }
        let alphabet = Array(#"{}[]":,0123456789.-eE truefalsnul\cmdatreq_snrawsubscribe_"#.utf8) + [0, 0xC3, 0xA9, 0xFF]
        var read = 0
        for round in 0..<6_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = seeds.randomElement(using: &generator)!
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[index] = alphabet.randomElement(using: &generator)!
                    case 1: bytes.remove(at: index)
                    default: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                    }
                }
            } else {
                bytes = (0..<Int.random(in: 0..<48, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            }
            if let frame = try? M2MFrame(decoding: String(decoding: bytes, as: UTF8.self)) {
                read += 1
                // What reads, writes and reads back the same.
                #expect((try? M2MFrame(decoding: frame.encoded())) == frame)
            }
        }
        #expect(read > 100, "mutations of real frames often stay frames: \(read)")
    }
}

@Suite("The cloud's error catalogue")
struct CloudErrorTests {
    @Test("each code once, with the reference's HTTP statuses")
    func catalogue() {
        let codes = CloudError.catalogue.map(\.code)
        #expect(Set(codes).count == codes.count)
        #expect(CloudError.named(9017)?.httpStatus == 401)
        #expect(CloudError.named(9041)?.httpStatus == 429)
        #expect(CloudError.named(9008)?.httpStatus == 500)
        #expect(CloudError.named(9014)?.httpStatus == 404)
        #expect(CloudError.named(1) == nil)
        #expect(CloudError.catalogue.allSatisfy { (9001...9999).contains($0.code) && !$0.message.isEmpty })
    }
}

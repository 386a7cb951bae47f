import Testing
import TetherCloudProtocol
import TetherCore

@Suite("Open API bodies")
struct CloudBodyTests {
    /// Writes `body` as JSON text and reads it back through the decoder the other side uses.
    static func reread<Body>(_ body: Body, _ json: (Body) -> JSONValue, _ decode: (JSONValue) throws(CloudBodyError) -> Body) throws -> Body {
        try decode(try JSONValue.parse(json(body).serialized()))
    }

    @Test("every registration form reads back as the form it is")
    func registration() throws {
        let forms: [RegistrationBody] = [
            .username("alice", password: "Secret-123"), .phone("+8613800000000", code: "123456", password: "Secret-123"),
            .email("a@example.com", password: "Secret-123"), .anonymous(phoneID: "phone-1"),
            .thirdParty(source: "google", uid: "sub-1", token: "a.b.c"),
        ]
        for form in forms {
            #expect(try Self.reread(form, \.json, RegistrationBody.init(json:)) == form)
        }
    }

    @Test("requests read back as written")
    func roundTrips() throws {
        let login = LoginBody(username: "alice", password: "pw")
        #expect(try Self.reread(login, \.json, LoginBody.init(json:)) == login)
        let update = UserUpdateBody(oldPassword: "a", newPassword: "b", phone: "123456", code: "1", email: "e@x.io", profile: ["name": "Al", "gender": "M"])
        #expect(try Self.reread(update, \.json, UserUpdateBody.init(json:)) == update)
        for reset in [PasswordResetBody.email("e@x.io"), .phone("123456", code: "1", newPassword: "pw")] {
            #expect(try Self.reread(reset, \.json, PasswordResetBody.init(json:)) == reset)
        }
        let bind = BindBody(devices: [.init(did: "d1", passcode: "PASSCODE1", remark: "r", alias: "lamp"), .init(did: "d2", passcode: "PASSCODE2")])
        #expect(try Self.reread(bind, \.json, BindBody.init(json:)) == bind)
        let unbind = DidListBody(dids: ["d1", "d2"])
        #expect(try Self.reread(unbind, \.json, DidListBody.init(json:)) == unbind)
        let rename = BindingUpdateBody(alias: "lamp", labels: ["kitchen"])
        #expect(try Self.reread(rename, \.json, BindingUpdateBody.init(json:)) == rename)
        let byMAC = BindMACBody(productKey: "pk", mac: "aabbccddeeff", alias: "a", setOwner: true)
        #expect(try Self.reread(byMAC, \.json, BindMACBody.init(json:)) == byMAC)
        for control in [ControlBody(.attrs(["power": .bool(true)]), queueTTL: 60), ControlBody(.raw([0, 1, 255]))] {
            #expect(try Self.reread(control, \.json, ControlBody.init(json:)) == control)
        }
        let call = ServiceCallBody(params: ["level": .int(3)], queueTTL: 5)
        #expect(try Self.reread(call, \.json, ServiceCallBody.init(json:)) == call)
        for rrpc in [RRPCCallBody(payload: Array("ping".utf8)), RRPCCallBody(payload: [0, 255], topic: "/pk/dn/user/get", timeoutMs: 800)] {
            #expect(try Self.reread(rrpc, \.json, RRPCCallBody.init(json:)) == rrpc)
        }
        for publish in [
            DevicePublishBody(topic: "/pk/dn/user/get", payload: Array("hi".utf8)), DevicePublishBody(topic: "/pk/dn/user/get", payload: [], qos: 1),
        ] {
            #expect(try Self.reread(publish, \.json, DevicePublishBody.init(json:)) == publish)
        }
        let desired = ShadowDesiredBody(desired: .merged(["mode": "eco", "old": .null]), version: 7)
        #expect(try Self.reread(desired, \.json, ShadowDesiredBody.init(json:)) == desired)
        let sms = SMSCodeBody(phone: "123456", code: "42")
        #expect(try Self.reread(sms, \.json, SMSCodeBody.init(json:)) == sms)
        let confirm = PasswordResetConfirmBody(token: "t", newPassword: "pw")
        #expect(try Self.reread(confirm, \.json, PasswordResetConfirmBody.init(json:)) == confirm)
    }

    @Test("answers read back as written")
    func answers() throws {
        let session = SessionBody(uid: "u", token: "t", expireAt: 1_800_000_000)
        #expect(try Self.reread(session, \.json, SessionBody.init(json:)) == session)
        let user = UserBody(uid: "u", username: "alice", email: "a@example.com", isAnonymous: true)
        #expect(try Self.reread(user, \.json, UserBody.init(json:)) == user)
        let device = DeviceBody(did: "d", productKey: "pk", mac: "aabbccddeeff", isOnline: true, labels: ["x"], role: "owner", port: 1883)
        #expect(try Self.reread(device, \.json, DeviceBody.init(json:)) == device)
        let results = DidResultsBody(success: ["a"], failed: ["b"])
        #expect(try Self.reread(results, \.json, DidResultsBody.init(json:)) == results)
        let latest = LatestStatusBody(did: "d", updatedAt: 5, attrs: ["on": .bool(true)])
        #expect(try Self.reread(latest, \.json, LatestStatusBody.init(json:)) == latest)
        let iot = IoTTokenBody(token: "0123456789abcdef0123456789abcdef", expireAt: 1_800_000_600)
        #expect(try Self.reread(iot, \.json, IoTTokenBody.init(json:)) == iot)
        let rrpc = RRPCAnswerBody(messageID: "1795318066000123", payload: Array("pong".utf8))
        #expect(try Self.reread(rrpc, \.json, RRPCAnswerBody.init(json:)) == rrpc)
        #expect(rrpc.json["payload_base64"] == "cG9uZw==")
        let page = DeviceListBody(devices: [device, DeviceBody(did: "e", productKey: "pk")])
        #expect(try Self.reread(page, \.json, DeviceListBody.init(json:)) == page)
        for updated in [UserUpdatedBody(updatedAt: "2026-11-23T10:00:00Z"), UserUpdatedBody(updatedAt: "2026-11-23T10:00:00Z", token: "t", expireAt: 9)] {
            #expect(try Self.reread(updated, \.json, UserUpdatedBody.init(json:)) == updated)
        }
        #expect(throws: CloudBodyError.self) { try UserUpdatedBody(json: ["updatedAt": "x", "token": "t"]) }
    }

    @Test("pairing bodies read back as written; a token's description keeps it secret; an unknown state is refused")
    func pairing() throws {
        for request in [PairingTokenRequestBody(), PairingTokenRequestBody(productKey: "pk", homeID: 3)] {
            #expect(try Self.reread(request, \.json, PairingTokenRequestBody.init(json:)) == request)
        }
        let token = PairingTokenBody(id: "pt_1", token: "0123456789abcdef0123456789abcdef", expireAt: 1_800_000_600, productKey: "pk", homeID: 2)
        #expect(try Self.reread(token, \.json, PairingTokenBody.init(json:)) == token)
        #expect(!token.description.contains("0123456789abcdef"))
        let statuses = [
            PairingStatusBody(id: "pt_1", state: .pending, expireAt: 1),
            PairingStatusBody(id: "pt_1", state: .bound, did: "d", productKey: "pk", mac: "aabbccddeeff", role: "owner", homeID: 2, expireAt: 1),
            PairingStatusBody(id: "pt_1", state: .refused, did: "d", errorCode: 9516, message: "another product", expireAt: 1),
        ]
        for status in statuses { #expect(try Self.reread(status, \.json, PairingStatusBody.init(json:)) == status) }
        #expect(throws: CloudBodyError.self) { try PairingStatusBody(json: ["id": "x", "state": "teleported", "expire_at": 1]) }
        #expect(throws: CloudBodyError.self) { try PairingTokenRequestBody(json: ["home_id": "three"]) }
    }

    @Test("a form post's strings are numbers where a number is asked")
    func lenientNumbers() throws {
        let body = try BindMACBody(json: ["product_key": "pk", "mac": "aabbccddeeff", "set_owner": "1"])
        #expect(body.setOwner)
        let control = try ControlBody(json: ["attrs": ["on": .bool(true)], "queue_ttl": "30"])
        #expect(control.queueTTL == 30)
    }

    @Test(
        "what a request lacks is an error that names the field",
        arguments: [
            (LoginBody.decoder, ["username": "alice"] as JSONValue, "password is required"),
            (LoginBody.decoder, ["username": "", "password": "x"], "username is required"),
            (LoginBody.decoder, ["username": .int(5), "password": "x"], "username must be a string"),
            (LoginBody.decoder, .array([]), "the body must be a JSON object"),
            (RegistrationBody.decoder, ["username": "alice"], "password is required"),
            (RegistrationBody.decoder, ["src": "google", "uid": "u"], "token is required"),
            (
                RegistrationBody.decoder, ["lang": "en"],
                "the body must hold one of: phone_id; username and password; phone, password and code; email and password"
            ),
            (BindBody.decoder, ["devices": .array([])], "devices must hold 1 to 100 entries"),
            (BindBody.decoder, ["devices": [["did": "d1", "passcode": "p"], ["did": "d2"]]], "devices[1].passcode is required"),
            (BindBody.decoder, ["devices": ["d1"]], "devices[0] must be an object"),
            (BindingUpdateBody.decoder, [:], "the body must hold at least one of remark, dev_alias, dev_label"),
            (BindingUpdateBody.decoder, ["dev_label": ["a", .int(1)]], "dev_label[1] must be a string"),
            (ControlBody.decoder, ["attrs": [:]], "attrs must be a non-empty object"),
            (ControlBody.decoder, ["raw": [.int(256)]], "raw must hold integers 0…255"),
            (ControlBody.decoder, ["attrs": ["on": .bool(true)], "queue_ttl": "soon"], "queue_ttl must be an integer"),
            (PasswordResetBody.decoder, ["phone": "123456", "code": "1"], "new_pwd is required"),
            (RRPCCallBody.decoder, [:], "payload_base64 is required"),
            (RRPCCallBody.decoder, ["payload_base64": "cG9uZw"], "payload_base64 must be padded Base64"),
            (RRPCCallBody.decoder, ["payload_base64": "", "timeout_ms": "soon"], "timeout_ms must be an integer"),
            (RRPCCallBody.decoder, ["payload_base64": "", "topic": .int(1)], "topic must be a string"),
            (DevicePublishBody.decoder, ["payload_base64": ""], "topic is required"),
            (DevicePublishBody.decoder, ["topic": "/pk/dn/user/get", "payload_base64": "", "qos": 2], "qos is 0 or 1"),
            (ShadowDesiredBody.decoder, ["version": 1], "desired is required"),
            (ShadowDesiredBody.decoder, ["desired": 5, "version": 1], "desired must be an object or \"null\""),
        ] as [(@Sendable (JSONValue) throws -> Void, JSONValue, String)])
    func missing(_ decode: @Sendable (JSONValue) throws -> Void, _ json: JSONValue, _ detail: String) {
        #expect { try decode(json) } throws: { ($0 as? CloudBodyError)?.description == detail }
    }

    @Test("a request for more than 100 devices is refused whole")
    func tooManyDevices() {
        let body: JSONValue = ["devices": .array((0...BindBody.maximumDevices).map { _ in ["did": "d"] })]
        #expect { try DidListBody(json: body) } throws: { ($0 as? CloudBodyError)?.description == "devices must hold 1 to 100 entries" }
    }

    @Test("arbitrary JSON is read or refused, never a crash (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_123)
        let keys = [
            "devices", "did", "passcode", "username", "password", "phone", "code", "email", "attrs", "raw", "queue_ttl", "src", "token", "uid", "dev_label",
            "set_owner", "payload_base64", "topic", "timeout_ms", "message_id",
        ]
        let decoders: [(JSONValue) throws -> Void] = [
            RegistrationBody.decoder, LoginBody.decoder, UserUpdateBody.decoder, PasswordResetBody.decoder, BindBody.decoder,
            DidListBody.decoder, BindingUpdateBody.decoder, BindMACBody.decoder, ControlBody.decoder, ServiceCallBody.decoder,
            SessionBody.decoder, UserBody.decoder, DeviceBody.decoder, DidResultsBody.decoder, RRPCCallBody.decoder, RRPCAnswerBody.decoder,
        ]
        var read = 0
        for _ in 0..<3_000 {
            let value = Self.randomValue(depth: 3, keys: keys, using: &generator)
            for decode in decoders where (try? decode(value)) != nil { read += 1 }
        }
        #expect(read > 0, "some random bodies are valid requests")
    }

    static func randomValue(depth: Int, keys: [String], using generator: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 8 : 5), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: -2...300, using: &generator))
        case 3: return .string(["", "d1", "12345678", "1", "aabbccddeeff", "Secret-123"].randomElement(using: &generator)!)
        case 4: return .double(Double.random(in: -1...1, using: &generator))
        case 5: return .array((0..<Int.random(in: 0..<4, using: &generator)).map { _ in randomValue(depth: depth - 1, keys: keys, using: &generator) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0..<5, using: &generator) {
                object[keys.randomElement(using: &generator)!] = randomValue(depth: depth - 1, keys: keys, using: &generator)
            }
            return .object(object)
        }
    }
}

// A decoder as a plain function, to list different bodies together.
extension LoginBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try LoginBody(json: $0) } }
extension RegistrationBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try RegistrationBody(json: $0) } }
extension UserUpdateBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try UserUpdateBody(json: $0) } }
extension PasswordResetBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try PasswordResetBody(json: $0) } }
extension BindBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try BindBody(json: $0) } }
extension DidListBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try DidListBody(json: $0) } }
extension BindingUpdateBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try BindingUpdateBody(json: $0) } }
extension BindMACBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try BindMACBody(json: $0) } }
extension ControlBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try ControlBody(json: $0) } }
extension ServiceCallBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try ServiceCallBody(json: $0) } }
extension SessionBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try SessionBody(json: $0) } }
extension UserBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try UserBody(json: $0) } }
extension DeviceBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try DeviceBody(json: $0) } }
extension DidResultsBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try DidResultsBody(json: $0) } }
extension RRPCCallBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try RRPCCallBody(json: $0) } }
extension RRPCAnswerBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try RRPCAnswerBody(json: $0) } }
extension DevicePublishBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try DevicePublishBody(json: $0) } }
extension ShadowDesiredBody { static let decoder: @Sendable (JSONValue) throws -> Void = { _ = try ShadowDesiredBody(json: $0) } }

import NIOCore
import Testing
import TetherAlink
import TetherCore
import TetherMQTT

@Suite("Alink CONNECT signing (shared/reference/alink-mqtt.md §2)")
struct AlinkSigningTests {
    let device = try! AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "dev01")

    @Test("one device, one secret: the captured CONNECT of the reference")
    func deviceSignature() throws {
        let credentials = AlinkCredentials.device(device, secret: "s3cr3t", timestamp: 1_795_318_066)
        #expect(credentials.password == "dc112dad5a8081d386ff928bfc773c7a15df5c5b")
        #expect(credentials.username == "dev01&a1PK000001")
        let clientID = try #require(AlinkClientID(parsing: credentials.clientID))
        #expect(clientID.prefix == "a1PK000001&dev01")
        #expect(clientID.timestamp == "1795318066")
        #expect(clientID.secureMode == 3)
        #expect(clientID.signMethod == .hmacsha1)
        #expect(clientID.wantsServerSideSubscriptions)
    }

    @Test("the reference's signed text")
    func signContent() {
        #expect(AlinkCredentials.signContent(device: device, clientIDPrefix: "a1PK000001&dev01", timestamp: "1795318066")
            == "clientIda1PK000001&dev01deviceNamedev01productKeya1PK000001timestamp1795318066")
    }

    @Test("dynamic registration: the reference's test vector")
    func registration() throws {
        let credentials = AlinkCredentials.registration(device, productSecret: "ps3cr3t", random: "AbCdEfGhIjKlMnO")
        #expect(credentials.password == "3b4dfa9ed8db933d45d40aa6a9181860e63563af3c0746dddda41363bc5463f1")
        let clientID = try #require(AlinkClientID(parsing: credentials.clientID))
        #expect(clientID.prefix == "dev01.a1PK000001")
        #expect(clientID.authType == "register")
        #expect(clientID["random"] == "AbCdEfGhIjKlMnO")
    }

    @Test("a whitelist-free token reconnect, as linkkit 1.2.13 builds it after /ext/regnwl")
    func tokenReconnect() throws {
        let credentials = AlinkCredentials.token(device, clientIDPrefix: "dev01.a1PK000001", token: "0123456789abcdef0123456789abcdef")
        #expect(credentials.clientID == "dev01.a1PK000001|authType=connwl,securemode=-2,_ss=1|")
        #expect(credentials.username == "dev01&a1PK000001")
        #expect(credentials.password == "0123456789abcdef0123456789abcdef")
        let parsed = try #require(AlinkClientID(parsing: credentials.clientID))
        #expect(parsed.secureMode == -2 && parsed.authType == "connwl" && parsed.wantsServerSideSubscriptions)
    }

    @Test("a device's connect and PINGRESP waits reach its MQTT client, signed or with a token")
    func clientWaits() {
        var signed = AlinkDeviceConfiguration(host: "127.0.0.1", device: device, deviceSecret: "s3cr3t", keepAlive: 60)
        #expect(signed.mqtt.pingTimeout == nil)
        #expect(signed.mqtt.keepAlive == 60)
        signed.connectTimeout = .seconds(30)
        signed.pingTimeout = .seconds(5)
        var withToken = AlinkDeviceConfiguration(host: "127.0.0.1", device: device, token: AlinkDeviceToken(clientIDPrefix: "dev01.a1PK000001", token: "t0k"))
        withToken.connectTimeout = .seconds(30)
        withToken.pingTimeout = .seconds(5)
        for configuration in [signed.mqtt, withToken.mqtt] {
            #expect(configuration.pingTimeout == .seconds(5))
            #expect(configuration.connectTimeout == .seconds(30))
        }
    }

    @Test("registration answers: the secret, the token, and malformed answers as typed errors")
    func registrationAnswers() throws {
        let secret = try AlinkDynamicRegistration.answer(ByteBuffer(string: #"{"productKey":"a1PK000001","deviceName":"dev01","deviceSecret":"s3"}"#), type: .register)
        #expect(secret == .deviceSecret("s3"))
        let token = try AlinkDynamicRegistration.answer(
            ByteBuffer(string: #"{"clientId":"dev01.a1PK000001","productKey":"a1PK000001","deviceName":"dev01","deviceToken":"t0k"}"#), type: .regnwl)
        #expect(token == .token(AlinkDeviceToken(clientIDPrefix: "dev01.a1PK000001", token: "t0k")))
        for bad in [#"{"deviceSecret":""}"#, "[]", "not json", #"{"clientId":"a|b","deviceToken":"t"}"#, #"{"clientId":"a"}"#] {
            for type in [AlinkRegistrationType.register, .regnwl] {
                let error = #expect(throws: TetherError.self) { try AlinkDynamicRegistration.answer(ByteBuffer(string: bad), type: type) }
                #expect(error?.code == .malformedPayload, "\(bad)")
            }
        }
    }

    @Test("every sign method verifies its own signature and refuses a wrong one", arguments: AlinkSignMethod.allCases)
    func verify(method: AlinkSignMethod) {
        let signature = method.sign("content", key: "key")
        #expect(method.verify(Array(signature.utf8), content: "content", key: "key"))
        #expect(method.verify(Array(signature.uppercased().utf8), content: "content", key: "key"))
        #expect(!method.verify(Array(signature.utf8), content: "content", key: "other"))
        #expect(!method.verify(Array(signature.dropLast().utf8), content: "content", key: "key"))
        #expect(!method.verify([], content: "content", key: "key"))
    }

    @Test("known HMAC vectors (RFC 2202 case 2, RFC 4231 case 2)")
    func knownVectors() {
        #expect(AlinkSignMethod.hmacmd5.sign("what do ya want for nothing?", key: "Jefe") == "750c783e6ab0b503eaa86e310a5db738")
        #expect(AlinkSignMethod.hmacsha1.sign("what do ya want for nothing?", key: "Jefe") == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(AlinkSignMethod.hmacsha256.sign("what do ya want for nothing?", key: "Jefe") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("names that could break a topic or the user name are refused", arguments: ["", "a/b", "a+b", "a#", "a&b", "a|b", "a b", String(repeating: "x", count: 65)])
    func badNames(name: String) {
        #expect(throws: TetherError.self) { try AlinkDeviceIdentity(productKey: name, deviceName: "dev01") }
        #expect(throws: TetherError.self) { try AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: name) }
    }

    @Test("the user name reads back")
    func username() throws {
        #expect(try AlinkDeviceIdentity(username: "dev01&a1PK000001") == device)
        #expect(throws: TetherError.self) { try AlinkDeviceIdentity(username: "dev01") }
        #expect(throws: TetherError.self) { try AlinkDeviceIdentity(username: "a&b&c") }
    }

    @Test("client ids: the captured one, a bare one, and malformed extensions")
    func clientIDs() throws {
        let captured = "a1PK000001&dev01|securemode=3,signmethod=hmacsha1,ext=1,_ss=1,lan=Python,_v=1.2.13,timestamp=1795318066|"
        let parsed = try #require(AlinkClientID(parsing: captured))
        #expect(parsed.description == captured)
        #expect(parsed["lan"] == "Python")
        #expect(AlinkClientID(parsing: "plain-id")?.prefix == "plain-id")
        #expect(AlinkClientID(parsing: "plain-id")?.fields.isEmpty == true)
        #expect(AlinkClientID(parsing: "a|securemode=3") == nil)
        #expect(AlinkClientID(parsing: "a|=3|") == nil)
        #expect(AlinkClientID(parsing: "a|novalue|") == nil)
    }
}

import Testing
import TetherCore
@testable import TetherProvisioning

/// Security 2 (SRP-6a 3072 / SHA-512, AES-256-GCM) against a known-answer vector made with
/// esp-rainmaker-cli's own `srp6a.py` (fixed a, b and a salt with a leading zero byte, which the
/// minimal integer encoding drops), and the big-integer arithmetic under it.
@Suite("ESP-IDF provisioning: security 2")
struct ESPSecurity2Tests {
    static func hex(_ text: String) -> [UInt8] { [UInt8](tetherHex: text)! }

    static let salt = hex("00c0ffee112233445566778899aabbcc")
    static let a = hex("8" + String(repeating: "1", count: 63))
    static let b = hex("9" + String(repeating: "2", count: 63))
    static let k = "a9c2e2559bf0ebb53f0cbbf62282906bede7f2182f00678211fbd5bde5b285033a4993503b87397f9be5ec02080fedbc0835587ad039060879b8621e8c3659e0"
    static let x = "9d07b70de36af47c19842607eba2444e4032a4b22dda2f00c341ca66c520b4f1ae3b0bbee2b103a3b8b731f41d8dc803e5274f28288d2eb68131668a4e95eeaf"
    static let v =
        "60e9500d40d95ce449adc033f95a832e121743ecaf8e1426a27356b8134fdeb17392921df1b1e42c374b95757f59318882d15fd530f533fba41acc9b346fbcdc5cbe1b48c536574a0bf528f235e55be936a9a8bf1b0df160589f5f04c8425eb77c037e39ce8c929ec38106930486c1dcc78058af1a4f46cbc47f3673c46178f8539f5e9b8d30ecda6eec739ccbeacd4bb0a041464e860a8131a7323090b4ff11217f3119d70e91b6b823cc3ff126f2a951241ff7edf43f952cdabe62352326789676422fb8f33905646adb02e40c7c21929f52a89b3722a8ed236f93a479285568ebc1c657ca4541e1946cbd3794e7192b9e4bfa55474232fd99cf292e599fa07c9357247b10bc12e7f02a69766df50e1c00aba8e0300fb9d454cf9f9dadfb9078a200c379efe95c33800e402aa5876428554b014622354c208a71ae45911713567e30b84d8f5b4540e1b64dab118bfe37ac97b6919fb42e103ca73a97429fc22a94ae374925a652bec91d5a02a0959144afe7258985b037ccc04be55cf1c6c6"
    static let bigA =
        "fdcef0ba95d24c07209165621e73a48fcf89cc1fbf305d6d0de155eb2285aab52319a6d06e65b56e397b980058aee63f040b6998e0579026675924d676e42ab96b23d444a75034e73e995baea92df79c76da5ac29b2679d00f6bd026d535fb651a56ef2b0992450b7a8dba0f236f9daa2847f31a8a9a90aa4c3ce804289f2f8465d9eb6c6efffa63bbebfaa64cc08d2c0fbb6da2ed9ea2e031e5353ce58c4af1afcad08cd9c7fa4844fb4bde0c667b83b3411f53d1e5fc8cb0febfe8c0009bd75bcf8394d5bcecb33ad0d4e8f424df6278319f11d8844120089c246d0dee7ff04c752a77ae05484552bcfa45dc655b9d864a7f50fe678d22698918926af15559585962cba817dd752fc6b0511b20e6111e179eded3aa94bc938a3c086631dbda7747511de2149febfdf5f809fa203e72b75e69106d16a45bfb95e4c08476061e8d534a74a0e5bd234e0bb37584cef2fcbdd71fccee6dc82282335438fb6a8c225af4a5a3a1b20b5a94040ce8693b8cf22aa22caeb996df0d009b1be64e2a7174"
    static let bigB =
        "94fea773f38a4cf7183457a302072a1e72235e5de62095d2a2ff5125b0174f14d09da6211dd574f6f84907e606ac9f956b664ac9de7611c8eb6b8e6d39b42938611188930e861813b09fa9a6869a01560fe380e4d6ca07608de3cb483cb14f446878bd4d7bb505935485459227a08cd117cd5071e1cfaea84a1d1975d93ac96c78935778582d9ddcd4013414007eec93abedeeba96ad2d54f6290d2e9ee2daad8be026f7ef33df93214f4072da313f3ce45d11d5976e6574a3a01f76f25160f4522cf7f34296f0ef5273eecb1d6e088b8e0bd5fc838e8d4bc37023e8efb0349b95b6c18aa551a877da354b0d97b0c7ab4aa87e3e6b67564dd67bd575d7d870bf04bc45b7899a9c2cf1bea65eb24409cdd260c155cfa4f9560d283146d9a8acaf9d3134da86671d7c75627e7be1badd4acdf4d365e0398c9089ba39722cb47c9d026cd0d58a4d9b2f9dc38eb38262f06c6bbfb6f90a31f5e66740d6dda17d33a18d60ab1d3ef8ac3d94a5f2c7f21fd5b9886bdf1db6caba6aea677b27e784852b"
    static let m = "77f33c9cbc1d8cad7fa9bf869da2c8942f363f450e1e09d4727ae0301bac084e773688f7099bc6e7741fede4c7b34bb43284940b027fad6e2b9e5304165d896c"
    static let hamk = "48aa77d3f7b53b7283631f256c90a5dc72629941e933aef6791106ff7613f68adbdb923fcd82032df49c462a0f88dbdc1889ca156813a1eb92709522e0f3a784"

    @Test("k, x and v as esp_prov computes them")
    func parameters() {
        #expect(SRP6a.k.bytes == Self.hex(Self.k))
        #expect(SRP6a.x(salt: Self.salt, username: Array("wifiprov".utf8), password: Array("abcd1234".utf8)).bytes == Self.hex(Self.x))
        #expect(SRP6a.verifier(salt: Self.salt, username: Array("wifiprov".utf8), password: Array("abcd1234".utf8)).bytes == Self.hex(Self.v))
    }

    @Test("the whole handshake against the vector, then the data phase with the counting nonce")
    func handshake() throws {
        var client = ESPSecurity2.Client(username: "wifiprov", password: "abcd1234", patchVersion: 1, ephemeral: Self.a)
        var device = ESPSecurity2.Device(
            username: "wifiprov", password: "abcd1234", patchVersion: 1, salt: Self.salt, ephemeral: Self.b, nonce: Array(repeating: 7, count: 12))
        let command0 = client.command0()
        #expect(command0 == .sec2Command0(username: Array("wifiprov".utf8), clientPublicKey: Self.hex(Self.bigA)))
        let response0 = try device.respond(to: try ESPSessionMessage(decoding: command0.encoded()))
        #expect(response0 == .sec2Response0(status: .success, devicePublicKey: Self.hex(Self.bigB), salt: Self.salt))
        let command1 = try #require(try client.command1(after: try ESPSessionMessage(decoding: response0.encoded())))
        #expect(command1 == .sec2Command1(clientProof: Self.hex(Self.m)))
        let response1 = try device.respond(to: try ESPSessionMessage(decoding: command1.encoded()))
        #expect(response1 == .sec2Response1(status: .success, deviceProof: Self.hex(Self.hamk), deviceNonce: Array(repeating: 7, count: 12)))
        try client.finish(after: response1)
        #expect(client.isEstablished && device.isEstablished)
        for round in 0..<3 {
            let request = ESPWiFiConfigMessage.getStatus.encoded() + [UInt8(round)]
            let sealed = try client.encrypt(request)
            #expect(sealed.count == request.count + 16)
            #expect(try device.decrypt(sealed) == request)
            let answer = ESPWiFiConfigMessage.applyConfigResponse(status: .success).encoded()
            #expect(try client.decrypt(try device.encrypt(answer)) == answer)
        }
        // Out of step (a replayed message under a moved nonce) does not open.
        let sealed = try client.encrypt([1, 2, 3])
        _ = try device.decrypt(sealed)
        #expect(throws: TetherError.self) { try device.decrypt(sealed) }
    }

    @Test("a wrong password fails at the proof; patch version 0 reuses the nonce")
    func wrongPassword() throws {
        var client = ESPSecurity2.Client(username: "wifiprov", password: "wrong")
        var device = ESPSecurity2.Device(username: "wifiprov", password: "abcd1234")
        let command1 = try #require(try client.command1(after: try device.respond(to: client.command0())))
        let error = #expect(throws: TetherError.self) { try device.respond(to: command1) }
        #expect(error?.code == .sessionNegotiationFailed)

        var legacy = ESPSecurity2.Client(username: "u", password: "p", patchVersion: 0)
        var old = ESPSecurity2.Device(username: "u", password: "p", patchVersion: 0)
        try legacy.finish(after: try old.respond(to: try #require(try legacy.command1(after: try old.respond(to: legacy.command0())))))
        #expect(try legacy.encrypt([9, 9]) == (try legacy.encrypt([9, 9])))
    }

    @Test("big integers: products, powers and reductions agree with each other")
    func arithmetic() {
        var generator = SplitMix64(seed: 5054)
        func random(_ limbs: Int) -> BigUInt { BigUInt(limbs: (0..<limbs).map { _ in generator.next() }) }
        let field = SRP6a.field
        for _ in 0..<5 {
            let (a, b) = (field.reduce(random(48)), field.reduce(random(48)))
            // (a·b)² = a²·b², and a^(e+f) = a^e · a^f.
            #expect(field.power(field.multiply(a, b), BigUInt(2)) == field.multiply(field.power(a, BigUInt(2)), field.power(b, BigUInt(2))))
            let (e, f) = (random(4), random(3))
            #expect(field.power(a, e + f) == field.multiply(field.power(a, e), field.power(a, f)))
            #expect(field.add(field.subtract(a, b), b) == a)
        }
        #expect(BigUInt(bytes: [0, 0, 1, 2]).bytes == [1, 2] && BigUInt(limbs: []).bytes == [0])
        // Fermat: a^(N−1) = 1 for the prime N.
        #expect(field.power(BigUInt(5), SRP6a.modulus - BigUInt(1)) == BigUInt(1))
    }
}

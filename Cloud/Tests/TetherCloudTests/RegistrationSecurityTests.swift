import Foundation
import HTTPTypes
import Testing
import TetherAlink
import TetherCore
@testable import TetherCloud

/// The takeover the security review found: `POST /dev/devices` re-registered any device whose
/// MAC and product key an attacker knew, with a passcode of their choice.
@Suite("Device registration cannot take a device over")
struct RegistrationSecurityTests {
    static func form(_ product: Administration.CreatedProduct, mac: String, passcode: String? = nil, authority: DeviceRegistrationForm.Authority = .product, timestamp: Int64 = Clock.unixNow()) throws -> DeviceRegistrationForm {
        try #require(DeviceRegistrationForm(productKey: product.productKey, mac: mac, passcode: passcode, authority: authority, timestamp: timestamp))
    }

    @Test("a stranger who knows a bound device's MAC and product key cannot change its passcode, signed or not", arguments: TestEngine.allCases)
    func takeover(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await cloud.admin.createDevice(productKey: product.productKey, name: "lamp-1", mac: "AC:CF:23:50:D4:46")
            let owner = try await GatewayFixtures.user(cloud, boundTo: [device])
            // The device connects once: it is activated.
            try await GatewayFixtures.withDevice(cloud, device) { _ in }
            let mac = "accf2350d446"

            // GAgent's unsigned form, as the attacker sent it.
            let unsigned = try await DeviceFixtures.postRegistration(cloud, "mac=\(mac)&product_key=\(product.productKey)&passcode=ATTACKER1")
            #expect(unsigned.errorCode == 9044, "\(unsigned.text)")
            // A guessed secret.
            let guessed = try await DeviceFixtures.postRegistration(cloud, try Self.form(product, mac: mac, passcode: "ATTACKER1").signed(with: "guess").formEncoded)
            #expect(guessed.errorCode == 9044)
            // Even the product secret (every unit carries it) no longer changes an activated device.
            let withProductSecret = try await DeviceFixtures.postRegistration(cloud, try Self.form(product, mac: mac, passcode: "ATTACKER1").signed(with: product.productSecret).formEncoded)
            #expect(withProductSecret.errorCode == 9001, "\(withProductSecret.text)")

            let stored = try #require(try await DeviceStore(cloud.database).find(device.did))
            #expect(stored.passcode == device.passcode)
            let attacker = try await cloud.register("attacker")
            let bind = try await cloud.call(.post, "/app/bindings", token: attacker.token, json: ["devices": [["did": .string(device.did), "passcode": "ATTACKER1"]]])
            #expect(bind["success"] == [])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: owner.token)["role"] == "special")

            // The device itself, with its own secret, does change it (after a factory reset).
            let own = try await DeviceFixtures.postRegistration(cloud, try Self.form(product, mac: mac, passcode: "NEWCODE99", authority: .device).signed(with: device.deviceSecret).formEncoded)
            #expect(own.status == .created, "\(own.text)")
            let answer = try #require(DeviceRegistrationAnswer(formEncoded: own.text))
            #expect(answer == DeviceRegistrationAnswer(did: device.did, passcode: "NEWCODE99"))
            #expect(try await DeviceStore(cloud.database).find(device.did)?.passcode == "NEWCODE99")
        }
    }

    @Test("a product-signed registration creates a device with a random passcode and its own secret, which then signs", arguments: TestEngine.allCases)
    func productSigned(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let mac = "0a0b0c0d0e0f"
            let first = try await cloud.call(.post, "/dev/devices", json: Self.json(try Self.form(product, mac: mac).signed(with: product.productSecret)))
            #expect(first.status == .created, "\(first.text)")
            let did = try #require(first["did"]?.stringValue)
            let passcode = try #require(first["passcode"]?.stringValue)
            let secret = try #require(first["device_secret"]?.stringValue)
            #expect(passcode.count == 10 && passcode.allSatisfy { $0.isUppercase })
            #expect(try await DeviceStore(cloud.database).find(did)?.passcode == passcode)

            // Never connected: the product secret may still set its passcode, and gets the same did.
            let again = try await cloud.call(.post, "/dev/devices", json: Self.json(try Self.form(product, mac: mac, passcode: "SECOND22", timestamp: Clock.unixNow() + 1).signed(with: product.productSecret)))
            #expect(again["did"] == .string(did))
            #expect(again["device_secret"] == .string(secret))

            // The secret it was given connects it to the gateway (Alink, device name = MAC).
            let created = Administration.CreatedDevice(did: did, productKey: product.productKey, deviceName: mac, deviceSecret: secret, passcode: "SECOND22")
            try await GatewayFixtures.withDevice(cloud, created) { _ in }
            // Activated now: the product secret is refused, the device's own secret works.
            let late = try await cloud.call(.post, "/dev/devices", json: Self.json(try Self.form(product, mac: mac, passcode: "THIRD333", timestamp: Clock.unixNow() + 2).signed(with: product.productSecret)))
            #expect(late.errorCode == 9001)
            let own = try await cloud.call(.post, "/dev/devices", json: Self.json(try Self.form(product, mac: mac, authority: .device, timestamp: Clock.unixNow() + 3).signed(with: secret)))
            #expect(own.status == .created)
            #expect(own["device_secret"] == nil, "the device already has its secret")
            let chosen = try #require(own["passcode"]?.stringValue)
            #expect(chosen != "SECOND22")
            #expect(try await DeviceStore(cloud.database).find(did)?.passcode == chosen)
        }
    }

    @Test("a captured registration sent again is refused, older or newest; stale and future timestamps are refused", arguments: [TestEngine.sqlite])
    func replay(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let product = try await cloud.admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
            let now = Clock.unixNow()
            let old = try Self.form(product, mac: "112233445566", passcode: "OLDCODE11", timestamp: now - 10).signed(with: product.productSecret).formEncoded
            let new = try Self.form(product, mac: "112233445566", passcode: "NEWCODE22", timestamp: now).signed(with: product.productSecret).formEncoded
            #expect(try await DeviceFixtures.postRegistration(cloud, old).status == .created)
            #expect(try await DeviceFixtures.postRegistration(cloud, new).status == .created)
            #expect(try await DeviceFixtures.postRegistration(cloud, old).errorCode == 9043)
            // The newest sent again is a replay too.
            #expect(try await DeviceFixtures.postRegistration(cloud, new).errorCode == 9043)
            let row = try #require(try await cloud.database.first("SELECT passcode FROM devices WHERE mac = '112233445566'"))
            #expect(try row.text("passcode") == "NEWCODE22")

            // A captured registration that let the cloud choose the passcode must not hand a new
            // one to whoever replays it.
            let secret = try #require(try await cloud.database.first("SELECT device_secret FROM devices WHERE mac = '112233445566'")?.text("device_secret"))
            let reset = try Self.form(product, mac: "112233445566", authority: .device, timestamp: now + 1).signed(with: secret).formEncoded
            let chosen = try #require(DeviceRegistrationAnswer(formEncoded: try await DeviceFixtures.postRegistration(cloud, reset).text)?.passcode)
            let replayed = try await DeviceFixtures.postRegistration(cloud, reset)
            #expect(replayed.errorCode == 9043)
            #expect(!replayed.text.contains(chosen))
            #expect(try await cloud.database.first("SELECT passcode FROM devices WHERE mac = '112233445566'")?.text("passcode") == chosen)

            for stamp in [now - 3600, now + 3600] {
                let stale = try Self.form(product, mac: "112233445577", timestamp: stamp).signed(with: product.productSecret).formEncoded
                #expect(try await DeviceFixtures.postRegistration(cloud, stale).errorCode == 9043)
            }
            // A signature over other fields than those sent.
            var tampered = try Self.form(product, mac: "112233445588", passcode: "TAMPERED1").signed(with: product.productSecret)
            tampered.passcode = "TAMPERED2"
            #expect(try await DeviceFixtures.postRegistration(cloud, tampered.formEncoded).errorCode == 9044)
            // auth=device for a device that does not exist.
            let noDevice = try Self.form(product, mac: "112233445599", authority: .device).signed(with: product.productSecret).formEncoded
            #expect(try await DeviceFixtures.postRegistration(cloud, noDevice).errorCode == 9044)
        }
    }

    @Test("GAgent's unsigned form, for a product opened to it: creates, never changes", arguments: [TestEngine.sqlite])
    func unsignedProduct(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let product = try await cloud.admin.createProduct(name: "legacy", modelFile: try DeviceFixtures.petHouse(), format: .gizwits, unsignedRegistration: true)
            let body = "mac=a1a2a3a4a5a6&product_key=\(product.productKey)&passcode=GAGENTPASS"
            let created = try await DeviceFixtures.postRegistration(cloud, body)
            #expect(created.status == .created)
            #expect(created.text.hasPrefix("did=") && !created.text.contains("&"), "GAgent reads did=… only: \(created.text)")
            let again = try await DeviceFixtures.postRegistration(cloud, body)
            #expect(again.text == created.text, "the same module with its passcode gets its did again")
            let other = try await DeviceFixtures.postRegistration(cloud, "mac=a1a2a3a4a5a6&product_key=\(product.productKey)&passcode=ATTACKER1")
            #expect(other.errorCode == 9001)
            let row = try #require(try await cloud.database.first("SELECT passcode FROM devices WHERE mac = 'a1a2a3a4a5a6'"))
            #expect(try row.text("passcode") == "GAGENTPASS")
            // No passcode: GAgent always sends one; an unsigned form cannot be answered with a chosen one.
            #expect(try await DeviceFixtures.postRegistration(cloud, "mac=a1a2a3a4a5a7&product_key=\(product.productKey)").errorCode == 9015)
        }
    }

    @Test("registrations are limited per source and per product", arguments: TestEngine.allCases)
    func rateLimits(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, configure: { configuration in
            configuration.abuse.registrationsPerSource = RateLimit(3, per: RateWindows.unending)
            configuration.abuse.registrationsPerProduct = RateLimit(4, per: RateWindows.unending)
            configuration.trustedProxies = ["127.0.0.1"]
        }) { cloud in
            let product = try await cloud.admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
            func register(_ index: Int, from source: String) async throws -> APIResponse {
                let form = try Self.form(product, mac: String(format: "0000000000%02x", index)).signed(with: product.productSecret)
                return try await DeviceFixtures.postRegistration(cloud, form.formEncoded, headers: [HTTPField.Name("X-Forwarded-For")!: source])
            }
            for index in 0..<3 { #expect(try await register(index, from: "192.0.2.1").status == .created) }
            let fourth = try await register(3, from: "192.0.2.1")
            #expect(fourth.errorCode == 9041)
            #expect(Int(fourth.headers[.retryAfter] ?? "") ?? 0 > 0)
            // Another source still registers, until the product's limit.
            #expect(try await register(4, from: "192.0.2.2").status == .created)
            #expect(try await register(5, from: "192.0.2.3").errorCode == 9041)
            let count = try #require(try await cloud.database.first("SELECT COUNT(*) AS n FROM devices"))
            #expect(try count.int("n") == 4)
        }
    }

    @Test("passcode binding: a hundred guesses in one request get a few answers, counted per user and per device", arguments: TestEngine.allCases)
    func bindThrottle(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, configure: { configuration in
            configuration.abuse.bindFailuresPerUser = RateLimit(5, per: RateWindows.unending)
            configuration.abuse.bindFailuresPerDevice = RateLimit(8, per: RateWindows.unending)
        }) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud)
            let stranger = try await cloud.register("stranger")
            // 99 wrong guesses and the right passcode last.
            var guesses: [JSONValue] = (0..<99).map { ["did": .string(device.did), "passcode": .string(String(format: "GUESS%05d", $0))] }
            guesses.append(["did": .string(device.did), "passcode": .string(device.passcode)])
            let answer = try await cloud.call(.post, "/app/bindings", token: stranger.token, json: ["devices": .array(guesses)])
            #expect(answer.errorCode == 9041, "\(answer.text)")
            let counted = try #require(try await cloud.database.first("SELECT count FROM rate_limits WHERE key = $1", .text("bind:user:\(stranger.uid)")))
            // Five compared, the sixth counted and refused before any comparison, the rest not looked at.
            #expect(try counted.int("count") == 6)
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: stranger.token).errorCode == 9017)
            // The user is held back even with the right passcode, for the rest of the window.
            #expect(try await DeviceFixtures.bind(cloud, device, token: stranger.token).errorCode == 9041)

            // Many accounts (anonymous ones cost nothing) together stop at the device's limit.
            for index in 0..<3 {
                let other = try await cloud.register("other\(index)")
                _ = try await DeviceFixtures.bind(cloud, device, token: other.token, passcode: "WRONGWRONG")
            }
            let owner = try await cloud.register("owner")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token).errorCode == 9041, "the device took 8 wrong passcodes")
            let another = try await DeviceFixtures.registeredDevice(cloud)
            #expect(try await DeviceFixtures.bind(cloud, another, token: owner.token)["success"] == [.string(another.did)])
        }
    }

    static func json(_ form: DeviceRegistrationForm) -> JSONValue {
        var object: JSONObject = [
            "mac": .string(form.mac), "product_key": .string(form.productKey), "auth": .string(form.authority.rawValue),
            "timestamp": .string(String(form.timestamp)), "sign": .string(form.sign),
        ]
        if let passcode = form.passcode { object["passcode"] = .string(passcode) }
        return .object(object)
    }
}

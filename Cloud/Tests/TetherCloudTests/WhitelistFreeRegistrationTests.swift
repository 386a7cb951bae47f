import Foundation
import NIOCore
import Testing
import TetherAlink
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// Alink's whitelist-free registration (`authType=regnwl`) and token reconnects
/// (`securemode=-2`) against the gateway, on plain TCP with `allowRegistrationWithoutTLS` as
/// the tests' gateway has it (the TLS rule itself is checked once).
@Suite("Whitelist-free registration and token reconnects", .timeLimit(.minutes(2)))
struct WhitelistFreeRegistrationTests {
    static var gateway: GatewayConfiguration {
        var gateway = CloudHarness.testGateway
        gateway.allowRegistrationWithoutTLS = true
        return gateway
    }

    static func product(_ cloud: CloudHarness, whitelistFree: Bool = true) async throws -> Administration.CreatedProduct {
        try await cloud.admin.createProduct(
            name: "Lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, whitelistFreeRegistration: whitelistFree)
    }

    /// Connects with the product secret and returns what `/ext/regnwl` carries, or the CONNACK refusal.
    static func register(_ cloud: CloudHarness, _ identity: AlinkDeviceIdentity, productSecret: String) async throws -> Result<JSONValue, MQTTError> {
        let credentials = AlinkCredentials.registration(identity, productSecret: productSecret, random: "AbCdEfGhIjKlMnO", authType: .regnwl)
        let configuration = MQTTClientConfiguration(
            host: "127.0.0.1", port: cloud.mqttPort!, clientID: credentials.clientID, username: credentials.username,
            password: Array(credentials.password.utf8), reconnect: nil)
        do {
            return .success(
                try await MQTTClient.withClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { client in
                    for await message in client.messages() where message.topic == "/ext/regnwl" {
                        return try JSONValue.parse(message.payload.readableBytesView)
                    }
                    throw TestFailure("no answer on /ext/regnwl")
                })
        } catch let error as MQTTError {
            return .failure(error)
        }
    }

    /// Connects with a token (`securemode=-2`) and posts properties; the post's code.
    static func postWithToken(_ cloud: CloudHarness, _ identity: AlinkDeviceIdentity, clientID: String, token: String) async throws -> Int {
        let credentials = AlinkCredentials.token(identity, clientIDPrefix: clientID, token: token)
        let configuration = MQTTClientConfiguration(
            host: "127.0.0.1", port: cloud.mqttPort!, clientID: credentials.clientID, username: credentials.username,
            password: Array(credentials.password.utf8), reconnect: nil)
        return try await MQTTClient.withClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { client in
            let base = "/sys/\(identity.productKey)/\(identity.deviceName)/thing/event/property/post"
            return try await client.subscribe(to: [MQTTTopicSubscription(filter: base + "_reply", qos: .atLeastOnce)]) { replies in
                try await client.publish(MQTTMessage(topic: base, payload: ByteBuffer(bytes: AlinkRequest(id: "1", method: "thing.event.property.post", params: ["Brightness": 7]).bytes), qos: .atLeastOnce))
                for await reply in replies { return try AlinkReply(parsing: reply.payload.readableBytesView).code }
                throw TestFailure("no post_reply")
            }
        }
    }

    @Test("a unit creates its device, gets a token, reconnects with it and posts; it cannot register twice", arguments: TestEngine.allCases)
    func registerAndReconnect(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: Self.gateway) { cloud in
            let product = try await Self.product(cloud)
            let identity = try AlinkDeviceIdentity(productKey: product.productKey, deviceName: "unit-0042")
            let answer = try await Self.register(cloud, identity, productSecret: product.productSecret).get()
            #expect(answer["productKey"] == .string(product.productKey) && answer["deviceName"] == "unit-0042")
            let clientID = try #require(answer["clientId"]?.stringValue)
            let token = try #require(answer["deviceToken"]?.stringValue)
            #expect(token.count == 32)
            let stored = try #require(try await DeviceStore(cloud.database).credentials(productKey: product.productKey, deviceName: "unit-0042"))
            #expect(stored.tokenHash == Secrets.sha256(token), "only the token's hash is kept")

            #expect(try await Self.postWithToken(cloud, identity, clientID: clientID, token: token) == 200)
            #expect(try await DeviceHistory(database: cloud.database).status(did: stored.did)?.attrs["Brightness"] == .int(7))

            // The SDK's way: a second unit registers with AlinkDynamicRegistration and posts with
            // AlinkDeviceClient on its token.
            let second = try AlinkDeviceIdentity(productKey: product.productKey, deviceName: "unit-0043")
            let registered = try await AlinkDynamicRegistration.register(
                host: "127.0.0.1", port: cloud.mqttPort!, device: second, productSecret: product.productSecret, type: .regnwl, logger: GatewayFixtures.quietLogger)
            guard case .token(let secondToken) = registered else {
                Issue.record("regnwl answered \(registered)")
                return
            }
            #expect(!"\(secondToken)".contains(secondToken.token), "a token's description hides it")
            let code = try await AlinkDeviceClient.withClient(
                configuration: AlinkDeviceConfiguration(host: "127.0.0.1", port: cloud.mqttPort!, device: second, token: secondToken, reconnect: nil),
                logger: GatewayFixtures.quietLogger
            ) { client in try await client.postProperties(["Brightness": 9]).code }
            #expect(code == 200)

            // Wrong tokens, and a second registration of a device that has connected, are refused.
            await #expect(throws: MQTTError.self) { _ = try await Self.postWithToken(cloud, identity, clientID: clientID, token: String(token.reversed())) }
            await #expect(throws: MQTTError.self) { _ = try await Self.postWithToken(cloud, identity, clientID: clientID, token: "") }
            let again = try await Self.register(cloud, identity, productSecret: product.productSecret)
            guard case .failure(let refusal) = again else {
                Issue.record("an activated device registered again: \(again)")
                return
            }
            #expect(refusal.reasonCode == .notAuthorized)
        }
    }

    @Test("refused: a product without the option, a wrong product secret, and registration or a token on plain TCP when TLS is required")
    func refusals() async throws {
        try await CloudHarness.run(.sqlite, gateway: Self.gateway) { cloud in
            let closed = try await Self.product(cloud, whitelistFree: false)
            let identity = try AlinkDeviceIdentity(productKey: closed.productKey, deviceName: "unit-1")
            guard case .failure(let refused) = try await Self.register(cloud, identity, productSecret: closed.productSecret) else {
                Issue.record("a product without whitelist-free registration created a device")
                return
            }
            #expect(refused.reasonCode == .notAuthorized)
            #expect(try await DeviceStore(cloud.database).credentials(productKey: closed.productKey, deviceName: "unit-1") == nil)

            let open = try await Self.product(cloud)
            let unit = try AlinkDeviceIdentity(productKey: open.productKey, deviceName: "unit-2")
            guard case .failure(let wrong) = try await Self.register(cloud, unit, productSecret: "not-the-secret") else {
                Issue.record("a wrong product secret registered")
                return
            }
            #expect(wrong.reasonCode == .badUserNameOrPassword)
            #expect(try await DeviceStore(cloud.database).credentials(productKey: open.productKey, deviceName: "unit-2") == nil)
        }
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let open = try await Self.product(cloud)
            let unit = try AlinkDeviceIdentity(productKey: open.productKey, deviceName: "unit-3")
            guard case .failure(let plain) = try await Self.register(cloud, unit, productSecret: open.productSecret) else {
                Issue.record("registration on plain TCP without allowRegistrationWithoutTLS")
                return
            }
            #expect(plain.reasonCode == .notAuthorized)
            // A device holding a token: the token is a bearer secret, refused on plain TCP.
            let device = try await GatewayFixtures.device(cloud, product: open)
            try await DeviceStore(cloud.database).setToken(did: device.did, tokenHash: Secrets.sha256("0123456789abcdef0123456789abcdef"), at: 0)
            let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
            let error = await #expect(throws: MQTTError.self) {
                _ = try await Self.postWithToken(cloud, identity, clientID: "x", token: "0123456789abcdef0123456789abcdef")
            }
            #expect(error?.reasonCode == .notAuthorized)
        }
    }
}

import Foundation
import HTTPTypes
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// The channel SDK's `account/bind` against the gateway: a phone connected as an Alink device
/// (`TetherChannel`) binds itself to the user whose IoT token it presents.
@Suite("account/bind: a device binds itself to its user with an IoT token", .timeLimit(.minutes(2)))
struct DeviceAccountBindingTests {
    static func iotToken(_ cloud: CloudHarness, _ user: UserSession) async throws -> IoTTokenBody {
        let answer = try await cloud.call(.post, "/app/iot_token", token: user.token)
        #expect(answer.status == .created, "\(answer.text)")
        return try IoTTokenBody(json: try #require(answer.json))
    }

    static func withPhone<Result: Sendable>(
        _ cloud: CloudHarness, _ device: Administration.CreatedDevice, _ body: (TetherChannel) async throws -> Result
    ) async throws -> Result {
        let configuration = TetherChannelConfiguration(
            host: "127.0.0.1", port: cloud.mqttPort!, device: try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName),
            deviceSecret: device.deviceSecret, replyTimeout: .seconds(5), reconnect: nil)
        return try await TetherChannel.withChannel(configuration: configuration, logger: GatewayFixtures.quietLogger, body)
    }

    /// The Alink code of a refused `account/…` request.
    static func refusal(_ channel: TetherChannel, _ topic: String, _ params: JSONValue) async -> Int? {
        do {
            _ = try await channel.invoke(topic: topic, params: params)
            return 200
        } catch {
            return error.cloudCode
        }
    }

    static func boundDIDs(_ cloud: CloudHarness, _ user: UserSession) async throws -> [String] {
        let list = try await cloud.call(.get, "/app/bindings", token: user.token)
        return list["devices"]?.arrayValue?.compactMap { $0["did"]?.stringValue } ?? []
    }

    @Test("bind with a token, once; unbind with another; a logged-out user's token and a stranger's are refused", arguments: TestEngine.allCases)
    func bindAndUnbind(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let phone = try await GatewayFixtures.device(cloud, product: product)
            let user = try await cloud.register("phoneowner\(UInt32.random(in: 0...UInt32.max))")
            let leaving = try await cloud.register("leaving\(UInt32.random(in: 0...UInt32.max))")
            let bind = "/sys/\(phone.productKey)/\(phone.deviceName)/account/bind"
            let unbind = "/sys/\(phone.productKey)/\(phone.deviceName)/account/unbind"
            try await Self.withPhone(cloud, phone) { channel in
                let token = try await Self.iotToken(cloud, user)
                #expect(token.token.count == 32 && token.expireAt > Int64(Date().timeIntervalSince1970))
                let reply = try await channel.invoke(topic: bind, params: ["iotToken": .string(token.token)])
                #expect(reply.data["uid"] == .string(user.uid))
                #expect(try await Self.boundDIDs(cloud, user) == [phone.did])

                // Single use; nothing but a known token works.
                #expect(await Self.refusal(channel, bind, ["iotToken": .string(token.token)]) == 401)
                #expect(await Self.refusal(channel, bind, ["iotToken": "0123456789abcdef0123456789abcdef"]) == 401)
                #expect(await Self.refusal(channel, bind, [:]) == 460)
                #expect(await Self.refusal(channel, bind, ["iotToken": .int(5)]) == 460)

                // A revoked session's token is void.
                let orphan = try await Self.iotToken(cloud, leaving)
                #expect(try await cloud.call(.post, "/app/logout", token: leaving.token).status == .ok)
                #expect(await Self.refusal(channel, bind, ["iotToken": .string(orphan.token)]) == 401)
                #expect(try await cloud.call(.get, "/app/bindings", token: leaving.token).errorCode == 9004)

                // Unbinding takes the user's consent (a token of theirs), and one who is not bound gets 404.
                let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
                #expect(await Self.refusal(channel, unbind, ["iotToken": .string(try await Self.iotToken(cloud, stranger).token)]) == 404)
                #expect(try await Self.boundDIDs(cloud, user) == [phone.did])
                _ = try await channel.invoke(topic: unbind, params: ["iotToken": .string(try await Self.iotToken(cloud, user).token)])
                #expect(try await Self.boundDIDs(cloud, user) == [])
            }
        }
    }

    @Test("on a product with sharing, a device someone owns cannot bind itself to a guest or a stranger; its owner may bind again")
    func ownedDevice() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await cloud.admin.createProduct(
                name: "Shared lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: true)
            let phone = try await GatewayFixtures.device(cloud, product: product)
            let owner = try await GatewayFixtures.user(cloud, boundTo: [phone])
            let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
            try await cloud.database.query(
                "INSERT INTO bindings (uid, did, role, created_at) VALUES ($1, $2, 'guest', 0)", .text(guest.uid), .text(phone.did))
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
            let bind = "/sys/\(phone.productKey)/\(phone.deviceName)/account/bind"
            try await Self.withPhone(cloud, phone) { channel in
                #expect(await Self.refusal(channel, bind, ["iotToken": .string(try await Self.iotToken(cloud, stranger).token)]) == 403)
                #expect(try await Self.boundDIDs(cloud, stranger) == [])
                // The guest's binding stays a guest's: binding again changes no role.
                let again = try await channel.invoke(topic: bind, params: ["iotToken": .string(try await Self.iotToken(cloud, guest).token)])
                #expect(again.data["role"] == "guest")
                let mine = try await channel.invoke(topic: bind, params: ["iotToken": .string(try await Self.iotToken(cloud, owner).token)])
                #expect(mine.data["role"] == "owner")
            }
        }
    }

    @Test("an IoT token ends with its lifetime")
    func expiry() async throws {
        var policy = CloudHarness.testPolicy
        policy.iotTokenLifetime = 1
        try await CloudHarness.run(.sqlite, policy: policy, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let phone = try await GatewayFixtures.device(cloud, product: product)
            let user = try await cloud.register("late\(UInt32.random(in: 0...UInt32.max))")
            let token = try await Self.iotToken(cloud, user)
            try await Task.sleep(for: .milliseconds(2_100))
            try await Self.withPhone(cloud, phone) { channel in
                #expect(await Self.refusal(channel, "/sys/\(phone.productKey)/\(phone.deviceName)/account/bind", ["iotToken": .string(token.token)]) == 401)
            }
            #expect(try await Self.boundDIDs(cloud, user) == [])
        }
    }
}

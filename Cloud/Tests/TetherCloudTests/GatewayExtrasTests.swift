import Foundation
import HTTPTypes
import NIOCore
import NIOSSL
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// The gateway's TLS listener, transparent data both ways, and binding changes pushed to apps.
@Suite("Device gateway: TLS, raw data, binding changes", .timeLimit(.minutes(1)))
struct GatewayExtrasTests {
    static let tlsDirectory = DeviceFixtures.petHouseURL.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/tls")

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: tlsDirectory.appendingPathComponent(name)))
    }

    static func tlsGateway() throws -> GatewayConfiguration {
        var gateway = CloudHarness.testGateway
        gateway.tlsPort = 0
        gateway.tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(try fixture("server.pem")).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: try fixture("server.key"), format: .pem))
        )
        return gateway
    }

    static func clientTLS() throws -> MQTTTransport {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(try fixture("ca.pem")))
        return try .tls(configuration)
    }

    @Test("over TLS: a device registers with its product secret, then connects with securemode=2 and posts")
    func registrationOverTLS() async throws {
        try await CloudHarness.run(.sqlite, gateway: try Self.tlsGateway()) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            let identity = try AlinkDeviceIdentity(productKey: device.productKey, deviceName: device.deviceName)
            let credentials = AlinkCredentials.registration(identity, productSecret: product.productSecret, random: "Zyxwvutsrqponml")
            let registration = MQTTClientConfiguration(
                host: "localhost", port: try #require(cloud.mqttTLSPort), clientID: credentials.clientID, username: credentials.username,
                password: Array(credentials.password.utf8), transport: try Self.clientTLS(), reconnect: nil
            )
            let secret: String? = try await MQTTClient.withClient(configuration: registration, logger: GatewayFixtures.quietLogger) { client in
                for await message in client.messages() where message.topic == "/ext/register" {
                    return try JSONValue.parse(message.payload.readableBytesView)["deviceSecret"]?.stringValue
                }
                return nil
            }
            #expect(secret == device.deviceSecret)
            let deviceSecret = try #require(secret)
            var configuration = try GatewayFixtures.configuration(cloud, device, secret: deviceSecret)
            configuration.host = "localhost"
            configuration.port = try #require(cloud.mqttTLSPort)
            configuration.transport = try Self.clientTLS()
            let code = try await AlinkDeviceClient.withClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { client in
                try await client.postProperties(["Brightness": 5]).code
            }
            #expect(code == 200)
        }
    }

    @Test("transparent data: c2s_raw reaches the device on down_raw, up_raw reaches the app as s2c_raw")
    func rawData() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlinks = client.downlinks()
                try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                    _ = try await app.subscribeResult()
                    try await app.send(.raw(M2MRaw(did: device.did, bytes: [0, 0, 0, 3, 4, 0, 0, 144, 2])))
                    let down = try await GatewayFixtures.nextDownlink(downlinks)
                    #expect(down.topic.topic == .downRaw)
                    #expect(Array(down.payload.readableBytesView) == [0, 0, 0, 3, 4, 0, 0, 144, 2])
                    try await client.postRaw([0xAA, 0x01, 0xFF])
                    let up = try await app.rawReport()
                    #expect(up.bytes == [0xAA, 0x01, 0xFF])
                    try await app.send(text: #"{"cmd": "c2s_raw", "data": {"did": "\#(device.did)", "raw": [300]}}"#)
                    #expect(try await app.invalid().errorCode == 9015)
                }
            }
        }
    }

    @Test("unbinding is pushed to the user's sessions as s2c_binding_changed, and ends the subscription")
    func bindingChanged() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                _ = try await app.subscribeResult()
                let answer = try await cloud.call(.delete, "/app/bindings", token: user.token, json: ["devices": [["did": .string(device.did)]]])
                #expect(answer["success"] == [.string(device.did)])
                let changed = try await app.bindingChanged()
                #expect(changed.did == device.did)
                #expect(changed.bound == false)
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    _ = try await client.postProperties(["Brightness": 1])
                }
                await #expect(throws: TestFailure.self) { _ = try await app.notification(timeout: .milliseconds(500)) }
            }
        }
    }
}

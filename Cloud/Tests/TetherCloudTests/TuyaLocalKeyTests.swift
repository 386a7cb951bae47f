import Foundation
import HTTPTypes
import Logging
import Testing
import Tether
import TetherAgent
import TetherCloudProtocol
import TetherCore

@testable import TetherCloud

/// Tuya local keys held by the cloud (Tether extension): the operator registers one for a
/// device; only its owner's app receives it (a stranger, a guest, a revoked guest and a former
/// owner do not), and the SDK controls the device on the LAN with it.
@Suite("Tuya local keys: cloud and SDK", .timeLimit(.minutes(2)))
struct TuyaLocalKeyTests {
    static let key = "thisisarealkey00"
    static let tuyaID = "eb0123456789abcdefghij"

    @Test("only the owner receives the key; the SDK controls the device with it", arguments: TestEngine.allCases)
    func ownerOnly(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            var model = try ThingModel(tslJSON: Array(try Data(contentsOf: GatewayFixtures.lampURL)))
            let product = try await cloud.admin.createProduct(
                name: "Lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: true)
            model.productKey = product.productKey
            let created = try await GatewayFixtures.device(cloud, product: product)
            let keyless = try await GatewayFixtures.device(cloud, product: product)

            // The operator's input is checked.
            await #expect(throws: CloudAPIError.self) {
                try await cloud.admin.setTuyaLocalKey(did: created.did, tuyaID: Self.tuyaID, localKey: "short", version: "3.3")
            }
            await #expect(throws: CloudAPIError.self) {
                try await cloud.admin.setTuyaLocalKey(did: created.did, tuyaID: Self.tuyaID, localKey: Self.key, version: "4.0")
            }
            await #expect(throws: CloudAPIError.self) {
                try await cloud.admin.setTuyaLocalKey(did: "nosuchdevice", tuyaID: Self.tuyaID, localKey: Self.key, version: "3.3")
            }
            try await cloud.admin.setTuyaLocalKey(did: created.did, tuyaID: Self.tuyaID, localKey: Self.key, version: "3.4")

            let ownerName = "owner\(UInt32.random(in: 0...UInt32.max))"
            let owner = try await GatewayFixtures.user(cloud, boundTo: [created, keyless], name: ownerName)
            let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
            let invitation = try await GatewayFixtures.shareAccepted(cloud, did: created.did, from: owner, to: guest)

            let path = "/app/devices/\(created.did)/tuya_local_key"
            #expect(try await cloud.call(.get, path).status != .ok, "no user session")
            #expect(try await cloud.call(.get, path, token: stranger.token).errorCode == 9017)
            #expect(try await cloud.call(.get, path, token: guest.token).errorCode == 9511)
            #expect(try await cloud.call(.get, "/app/devices/\(keyless.did)/tuya_local_key", token: owner.token).errorCode == 9512)
            let answer = try await cloud.call(.get, path, token: owner.token)
            let body = try TuyaLocalKeyBody(json: try #require(answer.json))
            #expect(body == TuyaLocalKeyBody(tuyaID: Self.tuyaID, localKey: Self.key, version: "3.4"))
            #expect(!"\(body)".contains(Self.key))

            // The SDK: the owner's app controls the device on the LAN with the cloud's key.
            let device = try VirtualDevice(
                model: model, identity: DeviceIdentity(did: created.did, mac: [2, 0, 0, 0, 0, 7], passcode: created.passcode, productKey: product.productKey))
            let server = TuyaDeviceServer(
                device: device,
                configuration: try TuyaDeviceConfiguration(
                    host: "127.0.0.1", port: 0, deviceID: Self.tuyaID, localKey: Array(Self.key.utf8), version: .v34, announcementTarget: .some(nil),
                    probePort: nil),
                logger: GatewayFixtures.quietLogger)
            let serving = Task { try await server.run() }
            defer { serving.cancel() }
            let port = try await server.port()
            let configuration = try SDKControlTests.configuration(cloud, products: [model])
            try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { app in
                try await app.account!.login(username: ownerName, password: "Passw0rd!")
                let lamp = try await app.tuyaDevice(did: created.did, host: "127.0.0.1", port: port)
                // One object for the device, whether the bindings list or this call made it first.
                #expect(lamp.lanProtocol == .tuya && lamp.did == created.did && app.device(did: created.did) === lamp)
                #expect(app.devices.filter { $0.did == created.did }.count <= 1)
                try await lamp.subscribe()
                try await lamp.write(["Brightness": 42])
                #expect(device.status.allValues["Brightness"] == .int(42))
            }

            // Revoked, unbound: no key.
            #expect(try await cloud.call(.delete, "/app/sharing/\(invitation.id)", token: owner.token).status == .ok)
            #expect(try await cloud.call(.get, path, token: guest.token).errorCode == 9017)
            #expect(try await cloud.call(.delete, "/app/bindings", token: owner.token, json: ["devices": [["did": .string(created.did)]]]).status == .ok)
            #expect(try await cloud.call(.get, path, token: owner.token).errorCode == 9017)
        }
    }
}

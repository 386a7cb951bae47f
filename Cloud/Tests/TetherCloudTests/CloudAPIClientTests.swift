import Foundation
import Testing
import TetherAlink
import TetherCloudClient
import TetherCore
@testable import TetherCloud

/// The SDK's typed Open API client (`TetherCloudAPI`) against a live cloud on loopback.
@Suite("SDK cloud API client", .timeLimit(.minutes(1)))
struct CloudAPIClientTests {
    static func api(_ cloud: CloudHarness) throws -> TetherCloudAPI {
        TetherCloudAPI(endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID, appSecret: cloud.app.appSecret, timeout: .seconds(20))
    }

    @Test("accounts: register, log in, wrong password, profile, password change revokes the old token")
    func accounts() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let api = try Self.api(cloud)
            let registered = try await api.register(username: "sdkuser", password: "Passw0rd!")
            #expect(registered.expireAt > Int64(Date().timeIntervalSince1970))
            let session = try await api.login(username: "sdkuser", password: "Passw0rd!")
            #expect(session.uid == registered.uid)
            let wrong = await #expect(throws: TetherError.self) { try await api.login(username: "sdkuser", password: "Wr0ng!pass") }
            #expect(wrong?.code == .cloudRefused)
            #expect(wrong?.cloudCode == 9020)
            let duplicate = await #expect(throws: TetherError.self) { try await api.register(username: "sdkuser", password: "Passw0rd!") }
            #expect(duplicate?.cloudCode == 9019)
            try await api.updateUserInfo(session, ["name": "Ada"])
            let user = try await api.userInfo(session)
            #expect(user.uid == session.uid && user.username == "sdkuser" && user.name == "Ada" && !user.isAnonymous)
            let renewed = try await api.changePassword(session, old: "Passw0rd!", new: "N3w!Passw0rd")
            #expect(renewed.token != session.token)
            let revoked = await #expect(throws: TetherError.self) { try await api.userInfo(session) }
            #expect(revoked?.code == .notLoggedIn)
            #expect(try await api.userInfo(renewed).uid == session.uid)
            let refreshed = try await api.refresh(renewed)
            #expect(refreshed.uid == session.uid && refreshed.token != renewed.token && refreshed.expireAt >= renewed.expireAt)
            #expect(try await api.userInfo(refreshed).uid == session.uid)
            let anonymous = try await api.loginAnonymously(phoneID: "phone-1")
            #expect(try await api.loginAnonymously(phoneID: "phone-1").uid == anonymous.uid)
            try await api.requestSMSCode(phone: "+8613800000000")
            #expect(try await cloud.lastMessage(to: "+8613800000000") != nil)
        }
    }

    @Test("bindings: bind by passcode and by MAC, list, latest data, control with the ledger, unbind")
    func devices() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let api = try Self.api(cloud)
            let session = try await api.register(username: "sdkdevices", password: "Passw0rd!")
            let product = try await GatewayFixtures.lampProduct(cloud)
            let device = try await GatewayFixtures.device(cloud, product: product)
            #expect(try await api.bind(session, did: device.did, passcode: "WRONGWRONG") == false)
            #expect(try await api.bind(session, did: device.did, passcode: device.passcode, alias: "desk lamp"))
            let registered = try await DeviceFixtures.register(cloud, product: product, mac: "a0b1c2d3e4f5")
            let byMAC = try await api.bind(session, productKey: product.productKey, mac: "a0b1c2d3e4f5", productSecret: product.productSecret)
            #expect(byMAC.did == registered.did)
            let badSignature = await #expect(throws: TetherError.self) {
                try await api.bind(session, productKey: product.productKey, mac: "a0b1c2d3e4f5", productSecret: "wrong")
            }
            #expect(badSignature?.cloudCode == 9044)
            let list = try await api.bindings(session)
            #expect(Set(list.map(\.did)) == [device.did, registered.did])
            #expect(list.first { $0.did == device.did }?.alias == "desk lamp")
            #expect(try await api.device(session, did: device.did).productKey == product.productKey)

            let offline = await #expect(throws: TetherError.self) { try await api.control(session, did: device.did, attrs: ["Brightness": 10]) }
            #expect(offline?.cloudCode == 9042)
            let queued = try await api.control(session, did: device.did, attrs: ["Brightness": 10], queueFor: .seconds(60))
            #expect(queued.state == "queued")
            try await GatewayFixtures.withDevice(cloud, device) { client in
                let downlink = try await GatewayFixtures.nextDownlink(client.downlinks())
                try await client.reply(downlink.request!.reply(), to: downlink)
                _ = try await client.postProperties(["Brightness": 10])
            }
            try await GatewayFixtures.waitUntil("the command is applied") { try await api.command(session, id: queued.id).state == "applied" }
            let latest = try await api.latest(session, did: device.did)
            #expect(latest.attrs["Brightness"] == 10)
            #expect(latest.updatedAt > 0)
            #expect(try await api.unbind(session, dids: [device.did, registered.did]).count == 2)
            #expect(try await api.bindings(session).isEmpty)
        }
    }

    @Test("addresses: http and https, ports, prefixes, IPv6; nonsense is refused")
    func endpoints() throws {
        #expect(try CloudEndpoint(url: "http://127.0.0.1:8080") == CloudEndpoint(host: "127.0.0.1", port: 8080))
        #expect(try CloudEndpoint(url: "https://cloud.example/api/") == CloudEndpoint(isSecure: true, host: "cloud.example", port: 443, basePath: "/api"))
        #expect(try CloudEndpoint(url: "http://[::1]:9000").host == "::1")
        #expect(try CloudEndpoint(url: "https://cloud.example:8443").description == "https://cloud.example:8443")
        for bad in ["cloud.example", "ftp://x", "http://", "http://host:70000", "http://host:port"] {
            #expect(throws: TetherError.self) { try CloudEndpoint(url: bad) }
        }
    }

    @Test("an expired session cannot be refreshed")
    func expiredRefresh() async throws {
        var policy = CloudHarness.testPolicy
        policy.tokenLifetime = 0
        try await CloudHarness.run(.sqlite, policy: policy) { cloud in
            let api = try Self.api(cloud)
            let expired = try await api.register(username: "shortlived", password: "Passw0rd!")
            let refusal = await #expect(throws: TetherError.self) { try await api.refresh(expired) }
            #expect(refusal?.code == .notLoggedIn)
            #expect(refusal?.cloudCode == 9006)
        }
    }

    @Test("a server that is not there, and one that is not the Open API, are told apart")
    func failures() async throws {
        let nowhere = TetherCloudAPI(endpoint: CloudEndpoint(host: "127.0.0.1", port: 1), appID: "x", timeout: .seconds(2))
        let refused = await #expect(throws: TetherError.self) { try await nowhere.login(username: "a", password: "b") }
        #expect(refused?.code == .connectionFailed)
    }
}

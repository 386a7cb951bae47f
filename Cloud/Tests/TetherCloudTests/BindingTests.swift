import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

@Suite("Devices and bindings")
struct BindingTests {
    @Test("a signed registration again keeps the did and sets the new passcode; bind by passcode; the list has every field pygizwits reads", arguments: TestEngine.allCases)
    func registerAndBind(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, mac: "AC:CF:23:50:D4:46")
            let product = Administration.CreatedProduct(productKey: device.productKey, productSecret: device.productSecret)
            let again = try await DeviceFixtures.register(cloud, product: product, mac: "accf2350d446", timestamp: Clock.unixNow() + 1)
            #expect(again.did == device.did)

            let session = try await cloud.register("owner1")
            let wrong = try await DeviceFixtures.bind(cloud, device, token: session.token, passcode: "WRONGWRONG")
            #expect(wrong["failed"] == [.string(device.did)])
            #expect(wrong["success"] == [])
            // The passcode now is the one of the second registration.
            let bound = try await DeviceFixtures.bind(cloud, again, token: session.token)
            #expect(bound["success"] == [.string(device.did)])

            let list = try await cloud.call(.get, "/app/bindings?show_disabled=0&limit=20&skip=0", token: session.token)
            let entry = try #require(list["devices"]?.arrayValue?.first)
            for key in ["did", "dev_alias", "product_name", "mac", "ws_port", "host", "wss_port", "protoc", "mcu_soft_version", "mcu_hard_version", "wifi_soft_version", "is_online", "passcode", "role", "product_key", "port", "port_s", "remark", "is_disabled", "type", "dev_label"] {
                #expect(entry[key] != nil, "missing \(key)")
            }
            #expect(entry["mac"] == "accf2350d446")
            #expect(entry["role"] == "special")
            #expect(entry["remark"] == "kitchen")
            #expect(entry["dev_alias"] == "lamp")
            #expect(entry["product_name"] == "Pet house")

            let single = try await cloud.call(.get, "/app/devices/\(device.did)", token: session.token)
            #expect(single["did"] == .string(device.did))

            let datapoints = try await cloud.call(.get, "/app/datapoint?product_key=\(device.productKey)")
            #expect(datapoints["entities"]?.arrayValue?.first?["attrs"]?.arrayValue?.count == 15)
            #expect(try await cloud.call(.get, "/app/datapoint?product_key=nope").errorCode == 9002)

            let broker = try await cloud.client.execute(uri: "/dev/devices/\(device.did)", method: .get)
            #expect(String(buffer: broker.body).hasPrefix("host="))
        }
    }

    @Test("registration validates its form", arguments: [TestEngine.sqlite])
    func registrationErrors(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let product = try await cloud.admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits, unsignedRegistration: true)
            for (body, code) in [
                (["mac": "zz", "product_key": .string(product.productKey), "passcode": "ABCDEFGH"], 9015),
                (["mac": "001122334455", "product_key": "unknown", "passcode": "ABCDEFGH"], 9002),
                (["mac": "001122334455", "product_key": .string(product.productKey), "passcode": "has space"], 9015),
                (["mac": "001122334455", "product_key": .string(product.productKey), "passcode": "ABC"], 9015),
                (["mac": "001122334455", "product_key": .string(product.productKey)], 9015),
                (["mac": "001122334455", "product_key": .string(product.productKey), "timestamp": "1", "sign": "00"], 9043),
                (["mac": "001122334455", "product_key": .string(product.productKey), "timestamp": "soon", "sign": "00"], 9043),
                (["mac": "001122334455", "product_key": .string(product.productKey), "sign": "00"], 9043),
                (["mac": "001122334455", "product_key": .string(product.productKey), "timestamp": .string(String(Clock.unixNow()))], 9044),
                (["mac": "001122334455", "product_key": .string(product.productKey), "timestamp": .string(String(Clock.unixNow())), "sign": "00", "auth": "root"], 9015),
            ] as [(JSONObject, Int64)] {
                let response = try await cloud.call(.post, "/dev/devices", json: .object(body))
                #expect(response.errorCode == code, "\(body): \(response.text)")
            }
            let json = try await cloud.call(.post, "/dev/devices", json: ["mac": "001122334455", "product_key": .string(product.productKey), "passcode": "ABCDEFGH"])
            #expect(json["did"]?.stringValue?.count == 22)
            #expect(json["passcode"] == nil, "an unsigned registration is answered as GAgent expects: did only")
        }
    }

    @Test("roles without sharing: special then normal; the special user's leaving promotes a normal one", arguments: TestEngine.allCases)
    func rolesWithoutSharing(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud)
            let first = try await cloud.register("first")
            let second = try await cloud.register("second")
            let third = try await cloud.register("third")
            for session in [first, second, third] {
                #expect(try await DeviceFixtures.bind(cloud, device, token: session.token)["success"] == [.string(device.did)])
            }
            func role(_ session: UserSession) async throws -> JSONValue? {
                try await cloud.call(.get, "/app/devices/\(device.did)", token: session.token)["role"]
            }
            #expect(try await role(first) == "special")
            #expect(try await role(second) == "normal")

            let unbind = try await cloud.call(.delete, "/app/bindings", token: first.token, json: ["devices": [["did": .string(device.did)], ["did": "unknown"]]])
            #expect(unbind["success"] == [.string(device.did)])
            #expect(unbind["failed"] == ["unknown"])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: first.token).errorCode == 9017)
            #expect(try await role(second) == "special")
            #expect(try await role(third) == "normal")
        }
    }

    @Test("roles with sharing: the first binder owns; others cannot bind; the owner's leaving ends guests'", arguments: TestEngine.allCases)
    func rolesWithSharing(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let owner = try await cloud.register("owner")
            let other = try await cloud.register("other")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: owner.token)["role"] == "owner")
            #expect(try await DeviceFixtures.bind(cloud, device, token: other.token)["failed"] == [.string(device.did)])

            // A guest (as sharing will create) loses the device with its owner.
            try await cloud.database.query(
                "INSERT INTO bindings (uid, did, role, created_at) VALUES ($1, $2, 'guest', 0)", .text(other.uid), .text(device.did)
            )
            #expect(try await cloud.call(.delete, "/app/bindings", token: owner.token, json: ["devices": [["did": .string(device.did)]]])["success"] == [.string(device.did)])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: other.token).errorCode == 9017)
        }
    }

    @Test("bind by MAC needs a fresh timestamp and the product secret's signature", arguments: TestEngine.allCases)
    func bindByMAC(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud)
            let session = try await cloud.register("macuser")
            let body: JSONValue = ["product_key": .string(device.productKey), "mac": .string(device.mac), "dev_alias": "hall"]

            let stale = DeviceFixtures.signatureHeaders(secret: device.productSecret, timestamp: Int64(Date().timeIntervalSince1970) - 3600)
            #expect(try await cloud.call(.post, "/app/bind_mac", token: session.token, headers: stale, json: body).errorCode == 9043)
            let forged = DeviceFixtures.signatureHeaders(secret: "not-the-secret")
            #expect(try await cloud.call(.post, "/app/bind_mac", token: session.token, headers: forged, json: body).errorCode == 9044)
            #expect(try await cloud.call(.get, "/app/bindings", token: session.token)["devices"] == [])

            let good = DeviceFixtures.signatureHeaders(secret: device.productSecret)
            let unknownMAC: JSONValue = ["product_key": .string(device.productKey), "mac": "0000000000ff"]
            #expect(try await cloud.call(.post, "/app/bind_mac", token: session.token, headers: good, json: unknownMAC).errorCode == 9014)
            let bound = try await cloud.call(.post, "/app/bind_mac", token: session.token, headers: good, json: body)
            #expect(bound.status == .created, "\(bound.text)")
            #expect(bound["did"] == .string(device.did))
            #expect(bound["dev_alias"] == "hall")
            #expect(bound["role"] == "special")
        }
    }

    @Test("a user sees and changes only their own bindings", arguments: TestEngine.allCases)
    func isolation(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud)
            let alice = try await cloud.register("alice")
            let mallory = try await cloud.register("mallory")
            _ = try await DeviceFixtures.bind(cloud, device, token: alice.token)

            #expect(try await cloud.call(.get, "/app/bindings", token: mallory.token)["devices"] == [])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: mallory.token).errorCode == 9017)
            #expect(try await cloud.call(.put, "/app/bindings/\(device.did)", token: mallory.token, json: ["remark": "mine"]).errorCode == 9017)
            #expect(try await cloud.call(.delete, "/app/bindings", token: mallory.token, json: ["devices": [["did": .string(device.did)]]])["failed"] == [.string(device.did)])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: alice.token)["remark"] == "kitchen")

            let update = try await cloud.call(.put, "/app/bindings/\(device.did)", token: alice.token, json: ["remark": "porch", "dev_label": ["outdoor", "cat"]])
            #expect(update["remark"] == "porch")
            #expect(update["dev_alias"] == "lamp")
            #expect(update["dev_label"] == ["outdoor", "cat"])
            #expect(try await cloud.call(.put, "/app/bindings/\(device.did)", token: alice.token, json: [:]).errorCode == 9015)
        }
    }

    @Test("the list pages with limit and skip", arguments: TestEngine.allCases)
    func paging(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let product = try await cloud.admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
            let session = try await cloud.register("pager")
            var dids: [String] = []
            for _ in 0..<5 {
                let device = try await DeviceFixtures.register(cloud, product: product)
                _ = try await DeviceFixtures.bind(cloud, device, token: session.token)
                dids.append(device.did)
            }
            let page = try await cloud.call(.get, "/app/bindings?limit=2&skip=2", token: session.token)
            #expect(page["devices"]?.arrayValue?.count == 2)
            let all = try await cloud.call(.get, "/app/bindings?limit=20", token: session.token)
            #expect(Set(all["devices"]?.arrayValue?.compactMap { $0["did"]?.stringValue } ?? []) == Set(dids))
            #expect(try await cloud.call(.get, "/app/bindings?limit=0", token: session.token).errorCode == 9015)
            #expect(try await cloud.call(.get, "/app/bindings?skip=-1", token: session.token).errorCode == 9015)
        }
    }
}

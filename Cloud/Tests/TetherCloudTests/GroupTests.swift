import Foundation
import HTTPTypes
import Testing
import Tether
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Groups (reference §2.6): a user's own, of devices bound to that user, controlled as one when
/// of one product, each device through the control path.
@Suite("Groups: a user's devices in groups, written to as one", .timeLimit(.minutes(2)))
struct GroupTests {
    static func create(_ cloud: CloudHarness, _ user: UserSession, _ body: JSONValue) async throws -> GroupBody {
        let answer = try await cloud.call(.post, "/app/group", token: user.token, json: body)
        #expect(answer.status == .created, "\(answer.text)")
        return try GroupBody(json: try #require(answer.json))
    }

    static func members(_ cloud: CloudHarness, _ user: UserSession, _ id: String) async throws -> [String] {
        try await cloud.call(.get, "/app/group/\(id)/devices", token: user.token).json?.arrayValue?.compactMap { $0["did"]?.stringValue } ?? []
    }

    @Test("made, renamed, filled and emptied by their owner; refusals with their codes; nobody else sees them", arguments: TestEngine.allCases)
    func lifecycle(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let lampProduct = try await GatewayFixtures.lampProduct(cloud)
            let otherProduct = try await cloud.admin.createProduct(
                name: "Other", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: false)
            let lamps = [try await GatewayFixtures.device(cloud, product: lampProduct), try await GatewayFixtures.device(cloud, product: lampProduct)]
            let other = try await GatewayFixtures.device(cloud, product: otherProduct)
            let unbound = try await GatewayFixtures.device(cloud, product: lampProduct)
            let user = try await GatewayFixtures.user(cloud, boundTo: lamps + [other])

            let group = try await Self.create(cloud, user, ["group_name": "Living room", "product_key": .string(lampProduct.productKey)])
            #expect(group.id.hasPrefix("gr_") && group.productKey == lampProduct.productKey && group.productName == "Lamp" && group.isSingleProduct)
            let mixed = try await Self.create(cloud, user, ["group_name": "Everything"])
            #expect(mixed.productKey.isEmpty && mixed.productName.isEmpty)
            #expect(try await cloud.call(.get, "/app/group", token: user.token).json?.arrayValue?.count == 2)

            let added = try await cloud.call(
                .post, "/app/group/\(group.id)/devices?show_detail=1", token: user.token,
                json: ["dids": .array((lamps + [other, unbound]).map { .string($0.did) })])
            let result = try GroupDevicesResultBody(json: try #require(added.json))
            #expect(result.success == lamps.map(\.did))
            #expect(result.failed.map(\.did) == [other.did, unbound.did] && result.failed.map(\.errorCode) == [9015, 9017])
            // Again: already in, counted as added; without show_detail no reasons.
            let again = try await cloud.call(.post, "/app/group/\(group.id)/devices", token: user.token, json: ["dids": [.string(lamps[0].did)]])
            #expect(again["success"] == [.string(lamps[0].did)] && again["detail"] == nil)
            #expect(Set(try await Self.members(cloud, user, group.id)) == Set(lamps.map(\.did)))
            let mixedAdd = try await cloud.call(.post, "/app/group/\(mixed.id)/devices", token: user.token, json: ["dids": [.string(other.did), .string(lamps[0].did)]])
            #expect(mixedAdd["success"]?.arrayValue?.count == 2)

            #expect(try await cloud.call(.put, "/app/group/\(group.id)", token: user.token, json: ["group_name": "Lounge"]).status == .ok)
            let renamed = try await cloud.call(.get, "/app/group", token: user.token).json?.arrayValue?.first { $0["id"]?.stringValue == group.id }
            #expect(renamed?["group_name"] == "Lounge")
            let removed = try await cloud.call(.delete, "/app/group/\(group.id)/devices", token: user.token, json: ["dids": [.string(lamps[1].did), "nope"]])
            #expect(removed["success"] == [.string(lamps[1].did)] && removed["failed"] == ["nope"])
            #expect(try await Self.members(cloud, user, group.id) == [lamps[0].did])

            // Unbinding takes the device out of every group of the user.
            #expect(try await cloud.call(.delete, "/app/bindings", token: user.token, json: ["devices": [["did": .string(lamps[0].did)]]]).status == .ok)
            #expect(try await Self.members(cloud, user, group.id).isEmpty)
            #expect(try await Self.members(cloud, user, mixed.id) == [other.did])

            for (body, code) in [
                (["group_name": ""] as JSONValue, Int64(9015)), (["group_name": .string(String(repeating: "g", count: 65))], 9015), ([:], 9015),
                (["group_name": "x", "product_key": "nope"], 9002),
            ] {
                #expect(try await cloud.call(.post, "/app/group", token: user.token, json: body).errorCode == code, "\(body.serialized())")
            }
            #expect(try await cloud.call(.post, "/app/group/\(group.id)/devices", token: user.token, json: ["dids": []]).errorCode == 9015)
            #expect(try await cloud.call(.post, "/app/group/\(mixed.id)/control", token: user.token, json: ["attrs": ["LightSwitch": true]]).errorCode == 9015)

            // Nobody else sees or touches them.
            let (stranger, guest, loggedOut) = try await GatewayFixtures.outsiders(cloud, of: lamps[1])
            for outsider in [stranger, guest] {
                #expect(try await cloud.call(.get, "/app/group", token: outsider.token).json?.arrayValue?.isEmpty == true)
                #expect(try await cloud.call(.get, "/app/group/\(mixed.id)/devices", token: outsider.token).errorCode == 9517)
                #expect(try await cloud.call(.put, "/app/group/\(mixed.id)", token: outsider.token, json: ["group_name": "mine"]).errorCode == 9517)
                #expect(try await cloud.call(.delete, "/app/group/\(mixed.id)", token: outsider.token).errorCode == 9517)
                #expect(
                    try await cloud.call(.post, "/app/group/\(group.id)/devices", token: outsider.token, json: ["dids": [.string(lamps[1].did)]]).errorCode
                        == 9517)
                #expect(try await cloud.call(.post, "/app/group/\(group.id)/control", token: outsider.token, json: ["attrs": ["LightSwitch": true]]).errorCode == 9517)
            }
            #expect(try await cloud.call(.get, "/app/group", token: loggedOut.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/group", token: loggedOut.token, json: ["group_name": "x"]).errorCode == 9004)

            #expect(try await cloud.call(.delete, "/app/group/\(mixed.id)", token: user.token).status == .ok)
            #expect(try await cloud.call(.get, "/app/group/\(mixed.id)/devices", token: user.token).errorCode == 9517)
        }
    }

    @Test("a single-product group's write reaches each connected device through the gateway, with a result per device", arguments: TestEngine.allCases)
    func control(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let first = try await GatewayFixtures.device(cloud, product: product)
            let second = try await GatewayFixtures.device(cloud, product: product)
            let offline = try await GatewayFixtures.device(cloud, product: product)
            let user = try await GatewayFixtures.user(cloud, boundTo: [first, second, offline])
            let group = try await Self.create(cloud, user, ["group_name": "Lamps", "product_key": .string(product.productKey)])
            _ = try await cloud.call(.post, "/app/group/\(group.id)/devices", token: user.token, json: ["dids": .array([first, second, offline].map { .string($0.did) })])
            try await GatewayFixtures.withDevice(cloud, first) { one in
                try await GatewayFixtures.withDevice(cloud, second) { two in
                    let downlinks = [one.downlinks(), two.downlinks()]
                    try await AutomationFixtures.waitOnline(cloud, user, [first, second])
                    #expect(
                        try await cloud.call(.post, "/app/group/\(group.id)/control", token: user.token, json: ["attrs": ["Brightness": 1000]]).errorCode == 9025)
                    let answer = try await cloud.call(.post, "/app/group/\(group.id)/control", token: user.token, json: ["attrs": ["Brightness": 30]])
                    let results = try (try #require(answer.json?.arrayValue)).map { try GroupControlResultBody(json: $0) }
                    let byDevice = Dictionary(uniqueKeysWithValues: results.map { ($0.did, $0) })
                    #expect(byDevice.count == 3 && byDevice[first.did]?.result == true && byDevice[second.did]?.result == true)
                    #expect(byDevice[offline.did]?.result == false && byDevice[offline.did]?.errorCode == 9042)
                    for (client, downlink) in zip([one, two], downlinks) {
                        let set = try await GatewayFixtures.nextDownlink(downlink)
                        #expect(set.topic.topic == .propertySet && set.request?.params == ["Brightness": 30])
                        try await client.reply(set.request!.reply(), to: set)
                    }
                    for result in results where result.result {
                        _ = try await GatewayFixtures.waitForCommand(cloud, try #require(result.commandID), state: .acknowledged)
                    }
                }
            }
        }
    }

    @Test("the SDK: groups made, filled, written to and deleted")
    func sdk() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            try await AutomationFixtures.withSDKUser(cloud) { client, product, lamp in
                let group = try await client.groups.create(name: "Porch", productKey: product.productKey)
                #expect(try await client.groups.list().map(\.id) == [group.id])
                let change = try await client.groups.add([lamp.did, "missing"], to: group.id)
                #expect(change.success == [lamp.did] && change.failed.map(\.did) == ["missing"] && change.failed.first?.errorCode == 9017)
                #expect(try await client.groups.devices(of: group.id).map(\.did) == [lamp.did])
                let results = try await client.groups.write(["LightSwitch": true], to: group.id)
                #expect(results == [GroupControlResultBody(did: lamp.did, result: false, errorCode: 9042)], "the lamp is not connected")
                try await client.groups.rename(group.id, to: "Front porch")
                #expect(try await client.groups.list().first?.name == "Front porch")
                try await client.groups.delete(group.id)
                let gone = await #expect(throws: TetherError.self) { try await client.groups.devices(of: group.id) }
                #expect(gone?.cloudCode == 9517)
            }
        }
    }
}

import Foundation
import HTTPTypes
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Pairing tokens: a device presents its user's token on `thing/pairing/activate` through the
/// gateway and is bound; every refusal has its own code and is pushed to the token's user.
@Suite("Pairing tokens: a new device binds itself to the user who onboarded it", .timeLimit(.minutes(2)))
struct PairingTokenTests {
    static func issue(_ cloud: CloudHarness, _ user: UserSession, _ body: JSONValue = [:]) async throws -> PairingTokenBody {
        let answer = try await cloud.call(.post, "/app/pairing_tokens", token: user.token, json: body)
        #expect(answer.status == .created, "\(answer.text)")
        return try PairingTokenBody(json: try #require(answer.json))
    }

    static func status(_ cloud: CloudHarness, _ user: UserSession, _ id: String) async throws -> PairingStatusBody {
        try PairingStatusBody(json: try #require(try await cloud.call(.get, "/app/pairing_tokens/\(id)", token: user.token).json))
    }

    /// The device presents `token`: the Alink reply's code and data.
    static func activate(_ cloud: CloudHarness, _ device: Administration.CreatedDevice, _ token: String) async throws -> AlinkReply {
        try await GatewayFixtures.withDevice(cloud, device) { client in try await client.activate(PairingActivation(token: token)) }
    }

    static func pairingPush(_ app: M2MTestClient) async throws -> PairingStatusBody {
        try await app.next("s2c_pairing") { frame -> PairingStatusBody? in if case .pairing(let status) = frame { status } else { nil } }
    }

    @Test(
        "bound once by its device, pushed to its user; reused, unknown, foreign, expired and orphaned tokens each have their code",
        arguments: TestEngine.allCases)
    func lifecycle(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let other = try await cloud.admin.createProduct(
                name: "Other lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: false)
            let lamp = try await GatewayFixtures.device(cloud, product: product)
            let second = try await GatewayFixtures.device(cloud, product: product)
            let foreign = try await GatewayFixtures.device(cloud, product: other)
            let suffix = UInt32.random(in: 0...UInt32.max)
            let user = try await cloud.register("pairer\(suffix)")
            let stranger = try await cloud.register("stranger\(suffix)")

            try await M2MTestClient.with(cloud, session: user) { app in
                let token = try await Self.issue(cloud, user, ["product_key": .string(product.productKey)])
                #expect(token.token.count == 32 && token.id.hasPrefix("pt_") && token.productKey == product.productKey)
                #expect(token.expireAt > Clock.unixNow() + 590 && token.expireAt <= Clock.unixNow() + 600)
                #expect(try await Self.status(cloud, user, token.id).state == .pending)
                // Nobody else learns of it.
                #expect(try await cloud.call(.get, "/app/pairing_tokens/\(token.id)", token: stranger.token).errorCode == 9513)

                let reply = try await Self.activate(cloud, lamp, token.token)
                #expect(reply.code == 200, "\(reply)")
                let pushed = try await Self.pairingPush(app)
                #expect(pushed.id == token.id && pushed.state == .bound && pushed.did == lamp.did && pushed.role != nil)
                let bound = try await cloud.call(.get, "/app/bindings", token: user.token)
                #expect(bound["devices"]?.arrayValue?.compactMap { $0["did"]?.stringValue } == [lamp.did])
                #expect(try await Self.status(cloud, user, token.id).state == .bound)
                // Giving up a token a device has used changes nothing.
                #expect(try await cloud.call(.delete, "/app/pairing_tokens/\(token.id)", token: user.token)["state"] == "bound")

                // Its own device asking again (a lost answer) hears the same; any other device: used.
                #expect(try await Self.activate(cloud, lamp, token.token).code == 200)
                #expect(try await Self.activate(cloud, second, token.token).code == 9515)
                #expect(try await Self.activate(cloud, second, "0123456789abcdef0123456789abcdef").code == 9513)
                #expect(try await Self.activate(cloud, second, "").code == 460)

                // A token for another product is used up by the refusal, which its user hears of.
                let narrow = try await Self.issue(cloud, user, ["product_key": .string(product.productKey)])
                #expect(try await Self.activate(cloud, foreign, narrow.token).code == 9516)
                let refused = try await Self.pairingPush(app)
                #expect(refused.id == narrow.id && refused.state == .refused && refused.errorCode == 9516)
                #expect(try await Self.status(cloud, user, narrow.id).state == .refused)
                #expect(try await Self.activate(cloud, second, narrow.token).code == 9515)
            }

            // Given up by its app: ended at once; nobody else may give it up.
            let abandoned = try await Self.issue(cloud, user)
            #expect(try await cloud.call(.delete, "/app/pairing_tokens/\(abandoned.id)", token: stranger.token).errorCode == 9513)
            let ended = try PairingStatusBody(json: try #require(try await cloud.call(.delete, "/app/pairing_tokens/\(abandoned.id)", token: user.token).json))
            #expect(ended.state == .expired)
            #expect(try await Self.activate(cloud, second, abandoned.token).code == 9514)

            // Expired: its ten minutes passed.
            let late = try await Self.issue(cloud, user)
            try await cloud.database.query("UPDATE pairing_tokens SET expires_at = $1 WHERE id = $2", .int(Clock.unixNow() - 1), .text(late.id))
            #expect(try await Self.activate(cloud, second, late.token).code == 9514)
            #expect(try await Self.status(cloud, user, late.id).state == .expired)

            // A token whose session ended (logout) binds nobody.
            let leaving = try await cloud.register("leaving\(suffix)")
            let orphan = try await Self.issue(cloud, leaving)
            #expect(try await cloud.call(.post, "/app/logout", token: leaving.token).status == .ok)
            #expect(try await Self.activate(cloud, second, orphan.token).code == 9514)
            #expect(try await cloud.call(.get, "/app/pairing_tokens/\(orphan.id)", token: leaving.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/pairing_tokens", token: leaving.token, json: [:]).errorCode == 9004)
            #expect(try await cloud.call(.delete, "/app/pairing_tokens/\(orphan.id)", token: leaving.token).errorCode == 9004)
            #expect(try await cloud.call(.get, "/app/bindings", token: user.token)["devices"]?.arrayValue?.count == 1)

            // Requests are checked: unknown product, no session, bad fields.
            #expect(try await cloud.call(.post, "/app/pairing_tokens", token: user.token, json: ["product_key": "nope"]).errorCode == 9002)
            #expect(try await cloud.call(.post, "/app/pairing_tokens", token: nil, json: [:]).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/pairing_tokens", token: user.token, json: ["home_id": "x"]).errorCode == 9015)
        }
    }

    @Test("a device owned by someone else is refused with the binding's code; a guest's token changes no role")
    func ownedDevice() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await cloud.admin.createProduct(
                name: "Shared lamp", modelFile: Array(try Data(contentsOf: GatewayFixtures.lampURL)), format: .tsl, sharingEnabled: true)
            let lamp = try await GatewayFixtures.device(cloud, product: product)
            // The first user to pair it owns it.
            let owner = try await cloud.register("owner\(UInt32.random(in: 0...UInt32.max))")
            let first = try await Self.issue(cloud, owner)
            #expect(try await Self.activate(cloud, lamp, first.token).code == 200)
            #expect(try await Self.status(cloud, owner, first.id).role == "owner")
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
            let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
            try await cloud.database.query("INSERT INTO bindings (uid, did, role, created_at) VALUES ($1, $2, 'guest', 0)", .text(guest.uid), .text(lamp.did))
            let token = try await Self.issue(cloud, stranger)
            let reply = try await Self.activate(cloud, lamp, token.token)
            #expect(reply.code == 9092, "\(reply)")
            let status = try await Self.status(cloud, stranger, token.id)
            #expect(status.state == .refused && status.errorCode == 9092 && status.did == lamp.did)
            // A guest already bound stays a guest: pairing is not a way to take a device over.
            let guestToken = try await Self.issue(cloud, guest)
            #expect(try await Self.activate(cloud, lamp, guestToken.token).code == 200)
            #expect(try await Self.status(cloud, guest, guestToken.id).role == "guest")
            let roles = try await cloud.database.query("SELECT uid, role FROM bindings WHERE did = $1", .text(lamp.did))
            var byUser: [String: String] = [:]
            for row in roles { byUser[try row.text("uid")] = try row.text("role") }
            #expect(byUser == [owner.uid: "owner", guest.uid: "guest"])
        }
    }

    @Test("a home's token places the device in the home; a member may not ask for one, a stranger is not told the home exists", arguments: TestEngine.allCases)
    func homes(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let lamp = try await GatewayFixtures.device(cloud, product: product)
            let suffix = UInt32.random(in: 0...UInt32.max)
            let owner = try await cloud.register("homeowner\(suffix)")
            let member = try await cloud.register("member\(suffix)")
            let stranger = try await cloud.register("stranger\(suffix)")
            let home = try HomeBody(json: try #require(try await cloud.call(.post, "/app/homes", token: owner.token, json: ["name": "Flat"]).json))
            try await cloud.database.query(
                "INSERT INTO home_members (home_id, uid, role, joined_at) VALUES ($1, $2, 'member', 0)", .int(home.id), .text(member.uid))
            #expect(try await cloud.call(.post, "/app/pairing_tokens", token: member.token, json: ["home_id": .int(home.id)]).errorCode == 9506)
            #expect(try await cloud.call(.post, "/app/pairing_tokens", token: stranger.token, json: ["home_id": .int(home.id)]).errorCode == 9505)

            let token = try await Self.issue(cloud, owner, ["home_id": .int(home.id)])
            #expect(try await Self.activate(cloud, lamp, token.token).code == 200)
            let status = try await Self.status(cloud, owner, token.id)
            #expect(status.state == .bound && status.homeID == home.id && status.errorCode == nil)
            let placed = try HomeBody(json: try #require(try await cloud.call(.get, "/app/homes/\(home.id)", token: owner.token).json))
            #expect(placed.devices.map(\.did) == [lamp.did])
            // The home's member reaches it through the home.
            let memberBindings = try await cloud.call(.get, "/app/bindings", token: member.token)
            #expect(memberBindings["devices"]?.arrayValue?.compactMap { $0["did"]?.stringValue } == [lamp.did])
        }
    }
}

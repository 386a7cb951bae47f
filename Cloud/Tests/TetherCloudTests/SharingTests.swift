import HTTPTypes
import Tether
import TetherAlink
import Testing
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Sharing (`gizwits-openapi.md` §2.5): invitations to a user and by QR code, accepted,
/// refused, cancelled and revoked, each rule with the reference's code.
@Suite("Sharing: invitations, QR codes, revocation", .timeLimit(.minutes(2)))
struct SharingTests {
    static func share(_ cloud: CloudHarness, token: String, _ body: SharingCreateBody) async throws -> APIResponse {
        try await cloud.call(.post, "/app/sharing", token: token, json: body.json)
    }

    static func list(_ cloud: CloudHarness, token: String, sent: Bool, query: String = "") async throws -> [SharingEntryBody] {
        let answer = try await cloud.call(.get, "/app/sharing?sharing_type=\(sent ? 0 : 1)\(query)", token: token)
        return try (answer["objects"]?.arrayValue ?? []).map { try SharingEntryBody(json: $0) }
    }

    static func roles(_ cloud: CloudHarness, _ did: String) async throws -> [String: BindingRole] {
        Dictionary(uniqueKeysWithValues: try await BindingStore(cloud.database).roles(of: did).map { ($0.uid, $0.role) })
    }

    @Test("an owner invites a user, who accepts and controls; a guest cannot share; revoking unbinds at once and fails the guest's queued commands",
        arguments: TestEngine.allCases)
    func inviteAcceptRevoke(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let owner = try await cloud.register("owner\(UInt32.random(in: 0...UInt32.max))")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            let guestName = "guest\(UInt32.random(in: 0...UInt32.max))"
            let guest = try await cloud.register(guestName)
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")

            // Refusals before anything is shared.
            #expect(try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .username("nobody-here"))).errorCode == 9082)
            #expect(try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(owner.uid))).errorCode == 9080)
            #expect(try await Self.share(cloud, token: stranger.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(guest.uid))).errorCode == 9017)
            #expect(try await cloud.call(.post, "/app/sharing", token: owner.token, json: ["type": 0, "did": .string(device.did)]).errorCode == 9015)

            let created = try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .username(guestName)))
            #expect(created.status == .created, "\(created.text)")
            let invitation = try SharingCreatedBody(json: try #require(created.json))
            #expect(invitation.qrContent == nil)
            #expect(try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(guest.uid))).errorCode == 9087)

            // Both sides see it; the other party's name is masked.
            let sent = try await Self.list(cloud, token: owner.token, sent: true)
            #expect(sent.map(\.id) == [invitation.id] && sent.first?.status == .pending && sent.first?.uid == guest.uid)
            #expect(sent.first?.username.contains("***") == true && sent.first?.username != guestName)
            let received = try await Self.list(cloud, token: guest.token, sent: false)
            #expect(received.map(\.id) == [invitation.id] && received.first?.uid == owner.uid && received.first?.productName == "Pet house")
            #expect(try await Self.list(cloud, token: stranger.token, sent: false).isEmpty)
            #expect(try await cloud.call(.get, "/app/sharing?sharing_type=1&did=\(device.did)", token: guest.token).errorCode == 9015)

            // Only the receiver answers; only the owner cancels.
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)?status=1", token: stranger.token).errorCode == 9084)
            #expect(try await cloud.call(.delete, "/app/sharing/\(invitation.id)", token: guest.token).errorCode == 9093)
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)?status=1", token: guest.token).status == .ok)
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)?status=1", token: guest.token).errorCode == 9089)
            #expect(try await Self.roles(cloud, device.did) == [owner.uid: .owner, guest.uid: .guest])

            // The guest cannot share on.
            #expect(try await Self.share(cloud, token: guest.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(stranger.uid))).errorCode == 9081)

            // A command the guest queued for the offline device is failed when access ends.
            let queued = try await cloud.call(.post, "/app/control/\(device.did)", token: guest.token, json: ["attrs": ["LED_OnOff": true], "queue_ttl": 600])
            let command = try CommandAcceptedBody(json: try #require(queued.json, "\(queued.text)"))
            #expect(command.state == "queued")
            #expect(try await cloud.call(.delete, "/app/sharing/\(invitation.id)", token: owner.token).status == .ok)
            #expect(try await Self.roles(cloud, device.did) == [owner.uid: .owner])
            #expect(try await cloud.call(.get, "/app/devices/\(device.did)", token: guest.token).errorCode == 9017)
            let failed = try await CommandLedger(database: cloud.database).find(command.commandID)
            #expect(failed?.state == .failed && failed?.message == "the user's access to the device ended")
            #expect(try await cloud.call(.delete, "/app/sharing/\(invitation.id)", token: owner.token).errorCode == 9094)
            #expect(try await Self.list(cloud, token: owner.token, sent: true, query: "&status=3").map(\.id) == [invitation.id])
            // The page's meta counts every match, not only the page.
            let beyond = try await cloud.call(.get, "/app/sharing?sharing_type=0&limit=1&skip=5", token: owner.token)
            #expect(beyond["meta"]?["total"] == 1 && beyond["objects"]?.arrayValue?.isEmpty == true, "\(beyond.text)")
            #expect(try await cloud.call(.get, "/app/sharing?sharing_type=0&limit=500", token: owner.token).errorCode == 9015)
        }
    }

    @Test("a QR code serves once, not its owner, and not after 15 minutes; a special user becomes owner when sharing; refusals and limits")
    func qrCodes() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let owner = try await cloud.register("owner\(UInt32.random(in: 0...UInt32.max))")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            let first = try await cloud.register("first\(UInt32.random(in: 0...UInt32.max))")
            let second = try await cloud.register("second\(UInt32.random(in: 0...UInt32.max))")

            let created = try SharingCreatedBody(
                json: try #require(try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .qrCode, did: device.did, duration: 5)).json))
            let code = try #require(created.qrContent.flatMap(SharingCreatedBody.code(inQRContent:)))
            #expect(code.count == 32)
            #expect(try await cloud.call(.get, "/app/sharing/code/\(code)", token: owner.token).errorCode == 9096)
            let offer = try SharingCodeBody(json: try #require(try await cloud.call(.get, "/app/sharing/code/\(code)", token: first.token).json))
            #expect(offer.productName == "Pet house" && offer.owner.contains("***") && offer.expiredAt > Clock.unixNow())
            // A QR code cannot be withdrawn.
            #expect(try await cloud.call(.delete, "/app/sharing/\(created.id)", token: owner.token).errorCode == 9089)
            #expect(try await cloud.call(.post, "/app/sharing/code/\(code)", token: first.token).status == .ok)
            #expect(try await cloud.call(.post, "/app/sharing/code/\(code)", token: second.token).errorCode == 9089)
            #expect(try await cloud.call(.post, "/app/sharing/code/0123456789abcdef0123456789abcdef", token: second.token).errorCode == 9084)
            #expect(try await Self.roles(cloud, device.did)[first.uid] == .guest)

            // The invitation limited the guest to 5 minutes: when they are up, the binding ends.
            let expires = try await cloud.database.first("SELECT expires_at FROM bindings WHERE uid = $1", .text(first.uid))?.int("expires_at")
            #expect(expires.map { abs($0 - (Clock.unixNow() + 300)) < 60 } == true)
            try await cloud.database.query("UPDATE bindings SET expires_at = $1 WHERE uid = $2", .int(Clock.unixNow() - 1), .text(first.uid))
            #expect(try await SharingStore(cloud.database).endExpiredBindings(now: Clock.unixNow()).map(\.uid) == [first.uid])
            #expect(try await Self.roles(cloud, device.did)[first.uid] == nil)

            // An expired code.
            let late = try SharingCreatedBody(json: try #require(try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .qrCode, did: device.did)).json))
            try await cloud.database.query("UPDATE sharing_invitations SET expired_at = $1 WHERE id = $2", .int(Clock.unixNow() - 1), .int(late.id))
            let lateCode = try #require(late.qrContent.flatMap(SharingCreatedBody.code(inQRContent:)))
            #expect(try await cloud.call(.post, "/app/sharing/code/\(lateCode)", token: second.token).errorCode == 9088)

            // A refused invitation cannot be accepted after.
            let invited = try SharingCreatedBody(
                json: try #require(try await Self.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(second.uid))).json))
            #expect(try await cloud.call(.put, "/app/sharing/\(invited.id)?status=2", token: second.token).status == .ok)
            #expect(try await cloud.call(.put, "/app/sharing/\(invited.id)?status=1", token: second.token).errorCode == 9089)
            #expect(try await cloud.call(.put, "/app/sharing/\(invited.id)?status=7", token: second.token).errorCode == 9015)
        }
    }

    @Test("on a product with sharing, the special user of an older binding becomes owner and the normal users guests when it shares; without sharing nobody shares")
    func roleChanges() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let shared = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let plain = try await DeviceFixtures.registeredDevice(cloud, sharing: false)
            let special = try await cloud.register("special\(UInt32.random(in: 0...UInt32.max))")
            let normal = try await cloud.register("normal\(UInt32.random(in: 0...UInt32.max))")
            let invited = try await cloud.register("invited\(UInt32.random(in: 0...UInt32.max))")
            // Bindings made before sharing existed on the product: special and normal.
            for (uid, role) in [(special.uid, "special"), (normal.uid, "normal")] {
                try await cloud.database.query(
                    "INSERT INTO bindings (uid, did, role, created_at) VALUES ($1, $2, $3, 0)", .text(uid), .text(shared.did), .text(role))
            }
            #expect(try await Self.share(cloud, token: normal.token, SharingCreateBody(kind: .user, did: shared.did, receiver: .uid(invited.uid))).errorCode == 9081)
            #expect(try await Self.share(cloud, token: special.token, SharingCreateBody(kind: .user, did: shared.did, receiver: .uid(invited.uid))).status == .created)
            #expect(try await Self.roles(cloud, shared.did) == [special.uid: .owner, normal.uid: .guest])

            #expect(try await DeviceFixtures.bind(cloud, plain, token: special.token)["success"] == [.string(plain.did)])
            let refused = try await Self.share(cloud, token: special.token, SharingCreateBody(kind: .user, did: plain.did, receiver: .uid(invited.uid)))
            #expect(refused.errorCode == 9081, "\(refused.text)")
        }
    }
}

/// The message centre, aliases, transfer, the WebSocket push, and the SDK's sharing calls.
@Suite("Sharing: messages, aliases, transfer, the SDK", .timeLimit(.minutes(2)))
struct SharingMessageTests {
    static func messages(_ cloud: CloudHarness, token: String, type: Int? = 1) async throws -> [MessageBody] {
        let filter = type.map { "?type=\($0)" } ?? ""
        return try (try await cloud.call(.get, "/app/messages\(filter)", token: token)["objects"]?.arrayValue ?? []).map { try MessageBody(json: $0) }
    }

    @Test("each party gets a message for each step, pushed on the WebSocket; only the receiver marks it; aliases; ownership handed on",
        arguments: TestEngine.allCases)
    func messagesAliasesTransfer(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let owner = try await cloud.register("owner\(UInt32.random(in: 0...UInt32.max))")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
            let invitation = try await M2MTestClient.with(cloud, session: guest) { app in
                let created = try SharingCreatedBody(
                    json: try #require(
                        try await SharingTests.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(guest.uid)))
                            .json))
                let pushed = try await app.next("s2c_message") { frame -> MessageBody? in if case .message(let m) = frame { m } else { nil } }
                #expect(pushed.data["event"] == "invited" && pushed.data["sharing_id"] == .int(created.id) && pushed.content.contains("shared"))
                return created
            }
            let guestMessages = try await Self.messages(cloud, token: guest.token)
            #expect(guestMessages.count == 1 && guestMessages.first?.status == .unread)
            #expect(try await Self.messages(cloud, token: owner.token).map { $0.data["event"] } == ["invited"])
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)?status=1", token: guest.token).status == .ok)
            #expect(try await Self.messages(cloud, token: owner.token).map { $0.data["event"] } == ["accepted", "invited"])

            // Marking: the receiver only; deleted messages leave the list.
            let first = try #require(guestMessages.first)
            #expect(try await cloud.call(.put, "/app/messages/\(first.id)?status=1", token: stranger.token).errorCode == 9101)
            #expect(try await cloud.call(.put, "/app/messages/\(first.id)?status=1", token: guest.token).status == .ok)
            #expect(try await Self.messages(cloud, token: guest.token).first { $0.id == first.id }?.status == .read)
            #expect(try await cloud.call(.put, "/app/messages/\(first.id)?status=2", token: guest.token).status == .ok)
            #expect(try await Self.messages(cloud, token: guest.token).allSatisfy { $0.id != first.id })
            #expect(try await cloud.call(.put, "/app/messages/\(first.id)?status=2", token: guest.token).errorCode == 9098)
            #expect(try await cloud.call(.put, "/app/messages/999999?status=1", token: guest.token).errorCode == 9085)

            // Aliases: each names the other; nobody else may.
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)/alias?user_alias=Grandma", token: owner.token).status == .ok)
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)/alias?user_alias=Me", token: stranger.token).errorCode == 9100)
            #expect(try await SharingTests.list(cloud, token: owner.token, sent: true).first?.userAlias == "Grandma")

            // The owner lists its guests; nobody else may.
            let guests = try await cloud.call(.get, "/app/\(device.did)/bindings", token: owner.token)
            #expect(guests.json?.arrayValue?.compactMap { $0["uid"]?.stringValue } == [guest.uid], "\(guests.text)")
            #expect(guests.json?.arrayValue?.first?["username"]?.stringValue?.contains("***") == true)
            #expect(try await cloud.call(.get, "/app/\(device.did)/bindings", token: guest.token).errorCode == 9093)
            #expect(try await cloud.call(.delete, "/app/\(device.did)/bindings?uid=\(owner.uid)", token: owner.token).errorCode == 9095)
            #expect(try await cloud.call(.delete, "/app/\(device.did)/bindings?uid=\(stranger.uid)", token: owner.token).errorCode == 9082)

            // Transfer: only the owner, only to a guest.
            #expect(try await cloud.call(.post, "/app/sharing/\(device.did)/transfer?uid=\(owner.uid)", token: guest.token).errorCode == 9093)
            #expect(try await cloud.call(.post, "/app/sharing/\(device.did)/transfer?uid=\(stranger.uid)", token: owner.token).errorCode == 9082)
            #expect(try await cloud.call(.post, "/app/sharing/\(device.did)/transfer?uid=\(guest.uid)", token: owner.token).status == .ok)
            #expect(try await SharingTests.roles(cloud, device.did) == [guest.uid: .owner])
            #expect(try await Self.messages(cloud, token: guest.token).first?.data["event"] == "transferred")
        }
    }

    @Test("the owner removes a guest: unbound at once, the invitation closed, a message left")
    func removeGuest() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let owner = try await cloud.register("owner\(UInt32.random(in: 0...UInt32.max))")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            let guest = try await cloud.register("guest\(UInt32.random(in: 0...UInt32.max))")
            let invitation = try SharingCreatedBody(
                json: try #require(
                    try await SharingTests.share(cloud, token: owner.token, SharingCreateBody(kind: .user, did: device.did, receiver: .uid(guest.uid))).json))
            #expect(try await cloud.call(.put, "/app/sharing/\(invitation.id)?status=1", token: guest.token).status == .ok)
            #expect(try await cloud.call(.delete, "/app/\(device.did)/bindings?uid=\(guest.uid)", token: guest.token).errorCode == 9093)
            #expect(try await cloud.call(.delete, "/app/\(device.did)/bindings?uid=\(guest.uid)", token: owner.token).status == .ok)
            #expect(try await SharingTests.roles(cloud, device.did) == [owner.uid: .owner])
            #expect(try await SharingTests.list(cloud, token: owner.token, sent: true).first?.status == .cancelled)
            #expect(try await Self.messages(cloud, token: guest.token).first?.data["event"] == "revoked")
        }
    }

    /// An SDK client of the pet house through the cloud only (no LAN discovery).
    static func cloudOnlyConfiguration(_ cloud: CloudHarness) throws -> TetherClient.Configuration {
        TetherClient.Configuration(
            products: [try ThingModel(gizwitsJSON: try DeviceFixtures.petHouse())], lan: LANConfiguration(discoveryEnabled: false),
            cloud: .init(
                endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID, sessionStore: MemorySessionStore(),
                requestTimeout: .seconds(20)))
    }

    /// The first message-centre push among a client's events, within 15 s.
    static func firstMessage(_ events: AsyncStream<TetherClientEvent>) async -> CloudMessage? {
        await firstEvent(events) { event in if case .message(let message) = event { message } else { nil } }
    }

    /// The first of a client's events that `extract` reads, within 15 s.
    static func firstEvent<Value: Sendable>(
        _ events: AsyncStream<TetherClientEvent>, _ extract: @escaping @Sendable (TetherClientEvent) -> Value?
    ) async -> Value? {
        await withTaskGroup(of: Value?.self) { group in
            group.addTask {
                for await event in events { if let value = extract(event) { return value } }
                return nil
            }
            group.addTask { try? await Task.sleep(for: .seconds(15)); return nil }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }

    @Test("two SDK clients: the owner invites, the guest hears of it, accepts, and finds the device in its list; revoked, it is gone")
    func sdk() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let configuration = try Self.cloudOnlyConfiguration(cloud)
            try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { owner in
                try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { guest in
                    let ownerName = "sdkowner\(UInt32.random(in: 0...UInt32.max))"
                    let guestName = "sdkguest\(UInt32.random(in: 0...UInt32.max))"
                    _ = try await owner.account!.register(username: ownerName, password: "Passw0rd!")
                    _ = try await guest.account!.register(username: guestName, password: "Passw0rd!")
                    _ = try await owner.bind(did: device.did, passcode: device.passcode)
                    let events = guest.events()
                    let id = try await owner.sharing.invite(.username(guestName), to: device.did)
                    let heard = await Self.firstMessage(events)
                    #expect(heard?.data["sharing_id"] == .int(id), "the invitation was pushed to the guest's client")
                    let received = try await guest.sharing.invitations(sent: false)
                    #expect(received.map(\.id) == [id] && received.first?.status == .pending)
                    try await guest.sharing.answer(id, accept: true)
                    #expect(guest.devices.contains { $0.did == device.did && $0.isBound })
                    #expect(try await owner.sharing.invitations(sent: true).first?.status == .accepted)
                    try await owner.sharing.cancel(id)
                    _ = try await guest.refreshBindings()
                    #expect(!guest.devices.contains { $0.did == device.did && $0.isBound })
                    #expect(try await guest.sharing.messages().map { $0.data["event"] }.contains("revoked"))
                }
            }
        }
    }
}

@Suite("Messages about devices, for the users who ask", .timeLimit(.minutes(2)))
struct DeviceNoticeTests {
    @Test("alert events and going offline become messages for the users who asked, and nobody else", arguments: TestEngine.allCases)
    func notices(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, watcher) = try await GatewayFixtures.boundLamp(cloud)
            let quiet = try await GatewayFixtures.user(cloud, boundTo: [device])
            let stranger = try await cloud.register("stranger\(UInt32.random(in: 0...UInt32.max))")
            let set = try await cloud.call(.put, "/app/devices/\(device.did)/notices", token: watcher.token, json: ["kinds": ["offline", "alert", "alert"]])
            #expect(set.json?["kinds"] == ["alert", "offline"], "\(set.text)")
            #expect(try await cloud.call(.put, "/app/devices/\(device.did)/notices", token: stranger.token, json: ["kinds": ["alert"]]).errorCode == 9017)
            #expect(try await cloud.call(.put, "/app/devices/\(device.did)/notices", token: watcher.token, json: ["kinds": ["weather"]]).errorCode == 9015)
            try await GatewayFixtures.withDevice(cloud, device) { client async throws in
                #expect(try await client.postEvent("Overheat", value: ["Temperature": 91]).isSuccess)
            }
            try await GatewayFixtures.waitUntil("the watcher has both messages") {
                let kinds = try await SharingMessageTests.messages(cloud, token: watcher.token, type: nil).map(\.type)
                return Set(kinds) == [DeviceNotices.alertType, DeviceNotices.offlineType]
            }
            let alert = try #require(try await SharingMessageTests.messages(cloud, token: watcher.token, type: nil).first { $0.type == DeviceNotices.alertType })
            #expect(alert.data["identifier"] == "Overheat" && alert.data["did"] == .string(device.did) && alert.content.contains("Overheat"))
            #expect(try await SharingMessageTests.messages(cloud, token: quiet.token, type: nil).isEmpty)
        }
    }
}

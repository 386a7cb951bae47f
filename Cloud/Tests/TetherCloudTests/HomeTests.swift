import Foundation
import HTTPTypes
import Testing
import Tether
import TetherCloudProtocol
import TetherCore

@testable import TetherCloud

/// Homes (Tether extension): every rule by a stranger, a member, an admin and the owner, through
/// REST and the WebSocket; membership as bindings that end on every path when it does.
@Suite("Homes: rooms, members, devices", .timeLimit(.minutes(2)))
struct HomeTests {
    static func home(_ cloud: CloudHarness, _ id: Int64, token: String) async throws -> HomeBody {
        try HomeBody(json: try #require(try await cloud.call(.get, "/app/homes/\(id)", token: token).json))
    }

    static func bindings(_ cloud: CloudHarness, token: String) async throws -> [DeviceBody] {
        let answer = try await cloud.call(.get, "/app/bindings", token: token)
        return try (answer.json?["devices"]?.arrayValue ?? []).map { try DeviceBody(json: $0) }
    }

    @Test("owner, admin, member and stranger: who may do what; members reach the home's devices on every path until they leave", arguments: TestEngine.allCases)
    func rolesAndAccess(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let suffix = UInt32.random(in: 0...UInt32.max)
            let owner = try await cloud.register("owner\(suffix)")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            let adminName = "admin\(suffix)"
            let admin = try await cloud.register(adminName)
            let member = try await cloud.register("member\(suffix)")
            let stranger = try await cloud.register("stranger\(suffix)")

            // Making a home: validation, then the owner's view.
            #expect(try await cloud.call(.post, "/app/homes", token: owner.token, json: ["geo_name": "Berlin"]).errorCode == 9015)
            #expect(try await cloud.call(.post, "/app/homes", token: owner.token, json: ["name": "Flat", "latitude": 100]).errorCode == 9015)
            let made = try await cloud.call(.post, "/app/homes", token: owner.token, json: ["name": "Flat", "geo_name": "Berlin", "latitude": .double(52.5), "longitude": .double(13.4)])
            #expect(made.status == .created, "\(made.text)")
            let home = try HomeBody(json: try #require(made.json))
            #expect(home.role == .owner && home.members.map(\.uid) == [owner.uid] && home.latitude == 52.5 && home.geoName == "Berlin")

            // A stranger learns nothing and changes nothing.
            for (method, path) in [
                (HTTPRequest.Method.get, "/app/homes/\(home.id)"), (.put, "/app/homes/\(home.id)"), (.delete, "/app/homes/\(home.id)"),
                (.post, "/app/homes/\(home.id)/rooms"), (.put, "/app/homes/\(home.id)/devices/\(device.did)"),
                (.post, "/app/homes/\(home.id)/members"), (.delete, "/app/homes/\(home.id)/members/\(owner.uid)"),
            ] {
                #expect(try await cloud.call(method, path, token: stranger.token, json: ["name": "x", "uid": .string(stranger.uid)]).errorCode == 9505, "\(method) \(path)")
            }
            #expect(try await cloud.call(.get, "/app/homes/999999", token: owner.token).errorCode == 9505)
            #expect(try await cloud.call(.get, "/app/homes", token: stranger.token).json == .array([]))

            // Rooms and the owner's device.
            let kitchen = try RoomBody(json: try #require(try await cloud.call(.post, "/app/homes/\(home.id)/rooms", token: owner.token, json: ["name": "Kitchen"]).json))
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/devices/\(device.did)", token: owner.token, json: ["room_id": 999999]).errorCode == 9508)
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/devices/\(device.did)", token: owner.token, json: ["room_id": .int(kitchen.id)]).status == .ok)
            #expect(try await Self.bindings(cloud, token: owner.token).first?.homeID == home.id)
            #expect(try await Self.bindings(cloud, token: owner.token).first?.roomID == kitchen.id)

            // Invitations: the owner invites an admin and a member; only the invitee answers.
            let toAdmin = try HomeInvitationBody(
                json: try #require(try await cloud.call(.post, "/app/homes/\(home.id)/members", token: owner.token, json: ["username": .string(adminName), "role": "admin"]).json))
            #expect(try await cloud.call(.post, "/app/homes/\(home.id)/members", token: owner.token, json: ["uid": .string(admin.uid)]).errorCode == 9087)
            #expect(try await cloud.call(.post, "/app/homes/\(home.id)/members", token: owner.token, json: ["uid": .string(owner.uid)]).errorCode == 9080)
            #expect(try await cloud.call(.put, "/app/home_invitations/\(toAdmin.id)?status=1", token: stranger.token).errorCode == 9084)
            let received = try await cloud.call(.get, "/app/home_invitations", token: admin.token).json?.arrayValue ?? []
            #expect(try received.map { try HomeInvitationBody(json: $0).id } == [toAdmin.id])
            #expect(try await cloud.call(.put, "/app/home_invitations/\(toAdmin.id)?status=1", token: admin.token).status == .ok)
            #expect(try await cloud.call(.put, "/app/home_invitations/\(toAdmin.id)?status=1", token: admin.token).errorCode == 9089)
            #expect(try await Self.bindings(cloud, token: admin.token).map(\.did) == [device.did])

            // The admin: rooms yes, admins no, members yes; the member joins and is told on the WebSocket.
            #expect(try await cloud.call(.post, "/app/homes/\(home.id)/rooms", token: admin.token, json: ["name": "Hall"]).status == .created)
            #expect(try await cloud.call(.post, "/app/homes/\(home.id)/members", token: admin.token, json: ["uid": .string(member.uid), "role": "admin"]).errorCode == 9506)
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)", token: admin.token).errorCode == 9506)
            let toMember = try HomeInvitationBody(
                json: try #require(try await cloud.call(.post, "/app/homes/\(home.id)/members", token: admin.token, json: ["uid": .string(member.uid)]).json))
            try await M2MTestClient.with(cloud, session: member) { app in
                #expect(try await cloud.call(.put, "/app/home_invitations/\(toMember.id)?status=1", token: member.token).status == .ok)
                let change = try await app.bindingChanged(bound: true)
                #expect(change.did == device.did)
                try await app.send(.subscribe(dids: [device.did]))
                #expect(try await app.subscribeResult().success.map(\.did) == [device.did])
            }
            let memberView = try await Self.bindings(cloud, token: member.token)
            #expect(memberView.map(\.did) == [device.did] && memberView.first?.role == "guest" && memberView.first?.homeID == home.id)
            #expect(try await cloud.call(.post, "/app/devices/\(device.did)/lan_grant", token: member.token).status == .ok)
            #expect(try await Self.home(cloud, home.id, token: member.token).members.map(\.role) == [.owner, .admin, .member])

            // A member uses the home but does not manage it, and is no owner of the device.
            #expect(try await cloud.call(.post, "/app/homes/\(home.id)/rooms", token: member.token, json: ["name": "Attic"]).errorCode == 9506)
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)/members/\(admin.uid)", token: member.token).errorCode == 9506)
            #expect(try await cloud.call(.post, "/app/devices/\(device.did)/firmware/upgrade", token: member.token, json: ["firmware_id": 1]).errorCode != nil)
            #expect(try await cloud.call(.get, "/app/\(device.did)/bindings", token: member.token).errorCode == 9093)

            // Removal by the admin ends the member's access at once, on the WebSocket too.
            try await M2MTestClient.with(cloud, session: member) { app in
                try await app.send(.subscribe(dids: [device.did]))
                _ = try await app.subscribeResult()
                #expect(try await cloud.call(.delete, "/app/homes/\(home.id)/members/\(member.uid)", token: admin.token).status == .ok)
                let change = try await app.bindingChanged(bound: false)
                #expect(change.did == device.did)
            }
            #expect(try await Self.bindings(cloud, token: member.token).isEmpty)
            #expect(try await cloud.call(.post, "/app/devices/\(device.did)/lan_grant", token: member.token).errorCode == 9017)
            #expect(try await cloud.call(.post, "/app/control/\(device.did)", token: member.token, json: ["attrs": ["LED_OnOff": true]]).errorCode == 9017)
            #expect(try await cloud.call(.get, "/app/homes/\(home.id)", token: member.token).errorCode == 9505)

            // The owner keeps its role; the admin leaves by itself; deleting the home ends the rest.
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)/members/\(owner.uid)", token: owner.token).errorCode == 9510)
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/members/\(owner.uid)", token: owner.token, json: ["role": "member"]).errorCode == 9510)
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/members/\(admin.uid)", token: owner.token, json: ["role": "member"]).status == .ok)
            #expect(try await Self.home(cloud, home.id, token: admin.token).role == .member)
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)", token: owner.token).status == .ok)
            #expect(try await Self.bindings(cloud, token: admin.token).isEmpty)
            #expect(try await Self.bindings(cloud, token: owner.token).map(\.did) == [device.did], "the owner's own binding stays")
            #expect(try await Self.bindings(cloud, token: owner.token).first?.homeID == nil)
            let events = try await SharingMessageTests.messages(cloud, token: admin.token, type: 5).compactMap { $0.data["event"]?.stringValue }
            #expect(events.contains("home_invited") && events.contains("home_deleted"), "\(events)")
        }
    }

    @Test("a device in one home cannot go into another; a member already bound keeps its own binding; the owner leaving the device takes it out of the home", arguments: TestEngine.allCases)
    func devicesAndBindings(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: false)
            let suffix = UInt32.random(in: 0...UInt32.max)
            let owner = try await cloud.register("owner\(suffix)")
            let neighbour = try await cloud.register("neighbour\(suffix)")
            #expect(try await DeviceFixtures.bind(cloud, device, token: owner.token)["success"] == [.string(device.did)])
            // Bound by itself before (a normal user of a product without sharing).
            #expect(try await DeviceFixtures.bind(cloud, device, token: neighbour.token)["success"] == [.string(device.did)])
            let first = try HomeBody(json: try #require(try await cloud.call(.post, "/app/homes", token: owner.token, json: ["name": "One"]).json))
            let second = try HomeBody(json: try #require(try await cloud.call(.post, "/app/homes", token: owner.token, json: ["name": "Two"]).json))
            #expect(try await cloud.call(.put, "/app/homes/\(first.id)/devices/\(device.did)", token: owner.token).status == .ok)
            #expect(try await cloud.call(.put, "/app/homes/\(second.id)/devices/\(device.did)", token: owner.token).errorCode == 9507)
            // Someone who is only a normal binder cannot place it.
            let theirs = try HomeBody(json: try #require(try await cloud.call(.post, "/app/homes", token: neighbour.token, json: ["name": "Theirs"]).json))
            #expect(try await cloud.call(.put, "/app/homes/\(theirs.id)/devices/\(device.did)", token: neighbour.token).errorCode == 9093)

            let invitation = try HomeInvitationBody(
                json: try #require(try await cloud.call(.post, "/app/homes/\(first.id)/members", token: owner.token, json: ["uid": .string(neighbour.uid)]).json))
            #expect(try await cloud.call(.put, "/app/home_invitations/\(invitation.id)?status=1", token: neighbour.token).status == .ok)
            // Leaving the home does not take away what the neighbour had of its own.
            #expect(try await cloud.call(.delete, "/app/homes/\(first.id)/members/\(neighbour.uid)", token: neighbour.token).status == .ok)
            #expect(try await HomeTests.bindings(cloud, token: neighbour.token).map(\.role) == ["normal"])

            // Withdrawn and refused invitations.
            let again = try HomeInvitationBody(
                json: try #require(try await cloud.call(.post, "/app/homes/\(first.id)/members", token: owner.token, json: ["uid": .string(neighbour.uid)]).json))
            #expect(try await cloud.call(.delete, "/app/home_invitations/\(again.id)", token: neighbour.token).errorCode == 9084)
            #expect(try await cloud.call(.delete, "/app/home_invitations/\(again.id)", token: owner.token).status == .ok)
            #expect(try await cloud.call(.put, "/app/home_invitations/\(again.id)?status=1", token: neighbour.token).errorCode == 9089)

            // Guests get no passcode to keep: a home's member rebinding by it is not possible.
            let again2 = try HomeInvitationBody(
                json: try #require(try await cloud.call(.post, "/app/homes/\(first.id)/members", token: owner.token, json: ["uid": .string(neighbour.uid)]).json))
            #expect(try await cloud.call(.put, "/app/home_invitations/\(again2.id)?status=1", token: neighbour.token).status == .ok)
            #expect(try await HomeTests.bindings(cloud, token: neighbour.token).first?.passcode == device.passcode, "its own binding keeps its passcode")

            // The special user unbinds: the device leaves the home.
            #expect(try await cloud.call(.delete, "/app/bindings", token: owner.token, json: ["devices": [["did": .string(device.did)]]]).status == .ok)
            #expect(try await HomeTests.home(cloud, first.id, token: owner.token).devices.isEmpty)
        }
    }

    @Test("two SDK clients: the owner makes a home and invites, the member hears of it, joins and finds the device with its home and room; removed, it is gone")
    func sdk() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let device = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            let configuration = try SharingMessageTests.cloudOnlyConfiguration(cloud)
            try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { owner in
                try await withTetherClient(configuration: configuration, logger: GatewayFixtures.quietLogger) { member in
                    let memberName = "sdkmember\(UInt32.random(in: 0...UInt32.max))"
                    _ = try await owner.account!.register(username: "sdkhomeowner\(UInt32.random(in: 0...UInt32.max))", password: "Passw0rd!")
                    let memberUID = try await member.account!.register(username: memberName, password: "Passw0rd!").uid
                    _ = try await owner.bind(did: device.did, passcode: device.passcode)
                    let home = try await owner.homes.create(name: "Cabin", geoName: "Lakeside")
                    let room = try await owner.homes.addRoom("Porch", to: home.id)
                    try await owner.homes.place(device.did, in: home.id, room: room.id)
                    #expect(owner.devices.first { $0.did == device.did }?.homeID == home.id)
                    #expect(owner.devices.first { $0.did == device.did }?.role == "owner")

                    let events = member.events()
                    let invitation = try await owner.homes.invite(.username(memberName), to: home.id)
                    let heard = await SharingMessageTests.firstMessage(events)
                    #expect(heard?.type == 5 && heard?.data["invitation_id"] == .int(invitation.id), "the invitation was pushed to the member's client")
                    #expect(try await member.homes.invitations().map(\.id) == [invitation.id])
                    try await member.homes.answer(invitation.id, accept: true)
                    let reached = try #require(member.devices.first { $0.did == device.did })
                    #expect(reached.isBound && reached.role == "guest" && reached.homeID == home.id && reached.roomID == room.id)
                    #expect(try await member.homes.list().map(\.name) == ["Cabin"])
                    let refused = await #expect(throws: TetherError.self) { try await member.homes.addRoom("Shed", to: home.id) }
                    #expect(refused?.cloudCode == 9506)

                    try await owner.homes.removeMember(memberUID, from: home.id)
                    _ = try await member.refreshBindings()
                    #expect(!member.devices.contains { $0.did == device.did && $0.isBound })
                    #expect(try await member.homes.list().isEmpty)
                    #expect(try await member.messages.list().contains { $0.data["event"] == "home_removed" })
                }
            }
        }
    }

    @Test("a member who owns a device takes it out whatever its role, and leaving takes its devices out; guests see no passcode; the owner's guest list and removal leave a home's members alone", arguments: TestEngine.allCases)
    func ownersOfDevices(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let suffix = UInt32.random(in: 0...UInt32.max)
            let owner = try await cloud.register("hostowner\(suffix)")
            let lender = try await cloud.register("lender\(suffix)")
            let other = try await cloud.register("other\(suffix)")
            let lent = try await DeviceFixtures.registeredDevice(cloud, sharing: true)
            #expect(try await DeviceFixtures.bind(cloud, lent, token: lender.token)["success"] == [.string(lent.did)])
            let home = try HomeBody(json: try #require(try await cloud.call(.post, "/app/homes", token: owner.token, json: ["name": "Shared"]).json))
            for (user, role) in [(lender, "admin"), (other, "member")] {
                let invitation = try HomeInvitationBody(
                    json: try #require(
                        try await cloud.call(.post, "/app/homes/\(home.id)/members", token: owner.token, json: ["uid": .string(user.uid), "role": .string(role)])
                            .json))
                #expect(try await cloud.call(.put, "/app/home_invitations/\(invitation.id)?status=1", token: user.token).status == .ok)
            }
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/devices/\(lent.did)", token: lender.token).status == .ok)
            let otherView = try await HomeTests.bindings(cloud, token: other.token)
            #expect(otherView.map(\.did) == [lent.did] && otherView.first?.passcode == "", "a member sees no passcode")
            // The lender shares it too; revoking that share leaves the home's binding alone.
            #expect(try await HomeTests.bindings(cloud, token: owner.token).map(\.did) == [lent.did])
            let share = try await cloud.call(
                .post, "/app/sharing", token: lender.token, json: SharingCreateBody(kind: .user, did: lent.did, receiver: .uid(other.uid)).json)
            #expect(share.errorCode == 9083, "already bound through the home")
            #expect(try await cloud.call(.get, "/app/\(lent.did)/bindings", token: lender.token).json == .array([]), "home members are not the share's guests")
            #expect(try await cloud.call(.delete, "/app/\(lent.did)/bindings?uid=\(other.uid)", token: lender.token).errorCode == 9082)

            // Demoted to member, the lender still takes its own device out; placed again, it leaves with it.
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/members/\(lender.uid)", token: owner.token, json: ["role": "member"]).status == .ok)
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)/devices/\(lent.did)", token: other.token).errorCode == 9506)
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)/devices/\(lent.did)", token: lender.token).status == .ok)
            #expect(try await HomeTests.bindings(cloud, token: other.token).isEmpty)
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/members/\(lender.uid)", token: owner.token, json: ["role": "admin"]).status == .ok)
            #expect(try await cloud.call(.put, "/app/homes/\(home.id)/devices/\(lent.did)", token: lender.token).status == .ok)
            #expect(try await HomeTests.bindings(cloud, token: other.token).map(\.did) == [lent.did])
            #expect(try await cloud.call(.delete, "/app/homes/\(home.id)/members/\(lender.uid)", token: lender.token).status == .ok)
            #expect(try await HomeTests.bindings(cloud, token: other.token).isEmpty, "the leaving owner's device left with it")
            #expect(try await HomeTests.home(cloud, home.id, token: owner.token).devices.isEmpty)
            #expect(try await HomeTests.bindings(cloud, token: lender.token).map(\.role) == ["owner"])
        }
    }
}

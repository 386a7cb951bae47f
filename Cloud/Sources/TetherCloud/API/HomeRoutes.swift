import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Homes (Tether extension): `/app/homes…` and `/app/home_invitations…`. Thin: every rule is in
/// `HomeService`.
struct HomeRoutes<Context: RequestContext> {
    let accounts: AccountService
    let homes: HomeService

    static var fields: JSONValue {
        JSONSchema.object([
            "name": JSONSchema.string("1 to 64 characters", maxLength: 64), "geo_name": JSONSchema.string("a place name", maxLength: 128),
            "latitude": ["type": "number", "minimum": -90, "maximum": 90], "longitude": ["type": "number", "minimum": -180, "maximum": 180],
        ])
    }
    static var named: JSONValue { JSONSchema.object(["name": JSONSchema.string("1 to 64 characters", maxLength: 64)], required: ["name"]) }

    func register(on router: DocumentedRouter<Context>) {
        registerHomes(on: router)
        registerRoomsAndDevices(on: router)
        registerMembers(on: router)
    }

    private func registerHomes(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/homes", summary: "Tether: make a home (you are its owner)", tag: "homes", security: .appAndUser,
                body: Self.fields, success: .created(JSONSchema.ref("Home")))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(try await homes.create(user, try await RequestForm.decode(request, as: HomeFieldsBody.init(json:))).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/homes", summary: "Tether: the homes you belong to, with your role, rooms, members and devices", tag: "homes",
                security: .appAndUser, success: .ok(JSONSchema.array(JSONSchema.ref("Home"))))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(.array(try await homes.list(user).map(\.json)))
        }
        router.on(
            .init(
                method: .get, path: "/app/homes/{id}", summary: "Tether: one home (members only: 9505 otherwise)", tag: "homes", security: .appAndUser,
                success: .ok(JSONSchema.ref("Home")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await homes.home(user, id: try Self.id(context)).json)
        }
        router.on(
            .init(
                method: .put, path: "/app/homes/{id}", summary: "Tether: rename or relocate a home (owner or admin: 9506 otherwise)", tag: "homes",
                security: .appAndUser, body: Self.fields, success: .ok(JSONSchema.ref("Home")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let fields = try await RequestForm.decode(request, as: HomeFieldsBody.init(json:))
            return Response.json(try await homes.update(user, id: try Self.id(context), fields).json)
        }
        router.on(
            .init(
                method: .delete, path: "/app/homes/{id}",
                summary: "Tether: delete a home (owner only); every member's access through it ends at once", tag: "homes", security: .appAndUser,
                success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await homes.delete(user, id: try Self.id(context))
            return Response.json(.object([:]))
        }
    }

    private func registerRoomsAndDevices(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/homes/{id}/rooms", summary: "Tether: add a room (owner or admin)", tag: "homes", security: .appAndUser,
                body: Self.named, success: .created(JSONSchema.ref("Room")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let name = try await RequestForm.decode(request, as: RoomFieldsBody.init(json:)).name
            return Response.json(try await homes.addRoom(user, id: try Self.id(context), name: name).json, status: .created)
        }
        router.on(
            .init(
                method: .put, path: "/app/homes/{id}/rooms/{room_id}", summary: "Tether: rename a room (owner or admin)", tag: "homes",
                security: .appAndUser, body: Self.named, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let name = try await RequestForm.decode(request, as: RoomFieldsBody.init(json:)).name
            try await homes.renameRoom(user, id: try Self.id(context), room: try Self.id(context, "room_id"), name: name)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .delete, path: "/app/homes/{id}/rooms/{room_id}",
                summary: "Tether: delete a room (owner or admin); its devices stay in the home, in no room", tag: "homes", security: .appAndUser,
                success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await homes.deleteRoom(user, id: try Self.id(context), room: try Self.id(context, "room_id"))
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .put, path: "/app/homes/{id}/devices/{did}",
                summary:
                    "Tether: place a device you own in the home, in room_id (or move it to another room); every member gets it (9507 when it is in another home)",
                tag: "homes", security: .appAndUser, body: JSONSchema.object(["room_id": JSONSchema.integer]), success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let room = try await RequestForm.decode(request, as: HomePlacementBody.init(json:)).roomID
            try await homes.place(user, id: try Self.id(context), did: try context.pathParameter("did"), room: room)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .delete, path: "/app/homes/{id}/devices/{did}",
                summary: "Tether: take a device out of the home (owner or admin); the members who had it through the home lose it", tag: "homes",
                security: .appAndUser, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await homes.unplace(user, id: try Self.id(context), did: try context.pathParameter("did"))
            return Response.json(.object([:]))
        }
    }

    private func registerMembers(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/homes/{id}/members",
                summary:
                    "Tether: invite a user (uid, username, email or phone) to join as admin (owner only) or member, valid 24 h; they answer at /app/home_invitations",
                tag: "homes", security: .appAndUser,
                body: JSONSchema.object([
                    "uid": JSONSchema.string, "username": JSONSchema.string, "email": JSONSchema.string, "phone": JSONSchema.string,
                    "role": ["type": "string", "enum": ["admin", "member"]],
                ]),
                success: .created(JSONSchema.ref("HomeInvitation")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: HomeInvitationCreateBody.init(json:))
            return Response.json(try await homes.invite(user, id: try Self.id(context), body).json, status: .created)
        }
        router.on(
            .init(
                method: .put, path: "/app/homes/{id}/members/{uid}", summary: "Tether: change a member's role (owner only)", tag: "homes",
                security: .appAndUser, body: JSONSchema.object(["role": ["type": "string", "enum": ["admin", "member"]]], required: ["role"]),
                success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let role = try await RequestForm.decode(request, as: HomeRoleBody.init(json:)).role
            try await homes.setRole(user, id: try Self.id(context), uid: try context.pathParameter("uid"), role: role)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .delete, path: "/app/homes/{id}/members/{uid}",
                summary:
                    "Tether: leave the home (your own uid) or remove a member (the owner anyone, an admin members); their access through the home ends at once",
                tag: "homes", security: .appAndUser, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await homes.remove(user, id: try Self.id(context), uid: try context.pathParameter("uid"))
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .get, path: "/app/home_invitations", summary: "Tether: invitations to homes you received (or sent, with sent=1), newest first",
                tag: "homes", security: .appAndUser, parameters: [.query("sent", JSONSchema.integer(minimum: 0, maximum: 1))],
                success: .ok(JSONSchema.array(JSONSchema.ref("HomeInvitation"))))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let sent = try request.integerQuery("sent", default: 0, range: 0...1) == 1
            return Response.json(.array(try await homes.invitations(user, sent: sent).map(\.json)))
        }
        router.on(
            .init(
                method: .put, path: "/app/home_invitations/{id}", summary: "Tether: accept (status=1) or refuse (status=2) an invitation to a home",
                tag: "homes", security: .appAndUser, parameters: [.query("status", JSONSchema.integer(minimum: 1, maximum: 2), required: true)],
                success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            guard let status = try request.optionalIntegerQuery("status", range: 1...2) else { throw CloudAPIError.formInvalid(detail: "status is required") }
            try await homes.answer(user, invitation: try Self.id(context), accept: status == 1)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .delete, path: "/app/home_invitations/{id}", summary: "Tether: withdraw a pending invitation you sent", tag: "homes",
                security: .appAndUser, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await homes.cancel(user, invitation: try Self.id(context))
            return Response.json(.object([:]))
        }
    }

    /// A numeric path parameter; an unusable one names nothing that exists (9505 for a home).
    static func id(_ context: Context, _ name: String = "id") throws -> Int64 {
        guard let id = Int64(try context.pathParameter(name)), id > 0 else {
            throw name == "room_id" ? CloudAPIError.roomNotFound() : CloudAPIError.homeNotFound()
        }
        return id
    }
}

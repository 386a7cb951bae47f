import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Sharing (`gizwits-openapi.md` §2.5): `/app/sharing…`, and the owner's list of guests
/// (`/app/{did}/bindings`, §2.3).
struct SharingRoutes<Context: RequestContext> {
    let accounts: AccountService
    let sharing: SharingService

    static var entrySchema: JSONValue {
        JSONSchema.object(
            [
                "id": JSONSchema.integer, "type": JSONSchema.integer, "uid": JSONSchema.string, "username": JSONSchema.string,
                "user_alias": JSONSchema.string, "email": JSONSchema.string, "phone": JSONSchema.string, "did": JSONSchema.string,
                "product_name": JSONSchema.string, "dev_alias": JSONSchema.string, "status": JSONSchema.integer(minimum: 0, maximum: 3),
                "created_at": JSONSchema.integer, "updated_at": JSONSchema.integer, "expired_at": JSONSchema.integer,
            ],
            required: [
                "id", "type", "uid", "username", "user_alias", "email", "phone", "did", "product_name", "dev_alias", "status", "created_at",
                "updated_at", "expired_at",
            ])
    }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/sharing",
                summary:
                    "Share a device (owner only): {type: 0, did, uid|username|email|phone} invites a user for 24 h; {type: 1, did} makes a QR code for 15 minutes; duration (minutes) limits the guest's time",
                tag: "sharing", security: .appAndUser,
                body: JSONSchema.object(
                    [
                        "type": JSONSchema.integer(minimum: 0, maximum: 1), "did": JSONSchema.string, "uid": JSONSchema.string, "username": JSONSchema.string,
                        "email": JSONSchema.string, "phone": JSONSchema.string, "duration": JSONSchema.integer(minimum: 1, maximum: 1440),
                    ], required: ["type", "did"]),
                success: .created(JSONSchema.object(["id": JSONSchema.integer, "qr_content": JSONSchema.string], required: ["id"]))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: SharingCreateBody.init(json:))
            return Response.json(try await sharing.create(user, body).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/sharing",
                summary:
                    "Invitations sent (sharing_type=0, may filter by did) or received (1), newest first; status 0 pending, 1 accepted, 2 refused, 3 cancelled",
                tag: "sharing", security: .appAndUser,
                parameters: [
                    .query("sharing_type", JSONSchema.integer(minimum: 0, maximum: 1), required: true),
                    .query("status", JSONSchema.integer(minimum: 0, maximum: 3)),
                    .query("did", JSONSchema.string), .query("limit", JSONSchema.integer(minimum: 1, maximum: 100)),
                    .query("skip", JSONSchema.integer(minimum: 0)),
                ],
                success: .ok(
                    JSONSchema.object(
                        [
                            "meta": JSONSchema.object(["total": JSONSchema.integer, "limit": JSONSchema.integer, "skip": JSONSchema.integer]),
                            "objects": JSONSchema.array(Self.entrySchema),
                        ], required: ["meta", "objects"]))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            guard let kind = try request.optionalIntegerQuery("sharing_type", range: 0...1) else {
                throw CloudAPIError.formInvalid(detail: "sharing_type is 0 (sent) or 1 (received)")
            }
            let status = try request.optionalIntegerQuery("status", range: 0...3).flatMap(SharingEntryBody.Status.init(rawValue:))
            let limit = try request.integerQuery("limit", default: 20, range: 1...100)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            let did = request.query("did")
            let page = try await sharing.list(user, sent: kind == 0, status: status, did: did, limit: limit, skip: skip)
            return Response.json([
                "meta": ["total": .int(page.total), "limit": .int(limit), "skip": .int(skip)], "objects": .array(page.entries.map(\.json)),
            ])
        }
        router.on(
            .init(
                method: .delete, path: "/app/sharing/{id}",
                summary: "The owner cancels a pending invitation to a user, or revokes an accepted one (the guest is unbound at once)",
                tag: "sharing", security: .appAndUser, success: .ok(JSONSchema.object(["id": JSONSchema.integer], required: ["id"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try Self.id(context)
            try await sharing.cancel(user, id: id)
            return Response.json(["id": .int(id)])
        }
        router.on(
            .init(
                method: .put, path: "/app/sharing/{id}", summary: "The receiver accepts (status=1) or refuses (status=2) an invitation",
                tag: "sharing", security: .appAndUser, parameters: [.query("status", JSONSchema.integer(minimum: 1, maximum: 2), required: true)],
                success: .ok(JSONSchema.object(["id": JSONSchema.integer], required: ["id"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try Self.id(context)
            guard let status = try request.optionalIntegerQuery("status", range: 1...2) else {
                throw CloudAPIError.formInvalid(detail: "status is 1 (accept) or 2 (refuse)")
            }
            try await sharing.answer(user, id: id, accept: status == 1)
            return Response.json(["id": .int(id)])
        }
        router.on(
            .init(
                method: .get, path: "/app/sharing/code/{code}", summary: "What a QR-code invitation offers (not for its owner: 9096)",
                tag: "sharing", security: .appAndUser,
                success: .ok(
                    JSONSchema.object(
                        ["owner": JSONSchema.string, "product_name": JSONSchema.string, "dev_alias": JSONSchema.string, "expired_at": JSONSchema.integer],
                        required: ["owner", "product_name", "dev_alias", "expired_at"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await sharing.inspect(user, code: try context.pathParameter("code")).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/sharing/code/{code}", summary: "Accept a QR-code invitation (once; not its owner)",
                tag: "sharing", security: .appAndUser, success: .ok(JSONSchema.object([:]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await sharing.accept(user, code: try context.pathParameter("code"))
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .get, path: "/app/{did}/bindings", summary: "The owner lists the device's guests (masked); others get 9093",
                tag: "sharing", security: .appAndUser,
                success: .ok(
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                "uid": JSONSchema.string, "username": JSONSchema.string, "phone": JSONSchema.string, "email": JSONSchema.string,
                                "created_at": JSONSchema.integer,
                            ], required: ["uid", "username", "phone", "email", "created_at"])))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await sharing.guests(user, did: try context.pathParameter("did")))
        }
        router.on(
            .init(
                method: .delete, path: "/app/{did}/bindings", summary: "The owner removes a guest (uid; not itself: 9095), as a revocation does",
                tag: "sharing", security: .appAndUser, parameters: [.query("uid", JSONSchema.string, required: true)], success: .ok(JSONSchema.object([:]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let uid = try request.requiredQuery("uid")
            try await sharing.removeGuest(user, did: try context.pathParameter("did"), uid: uid)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .put, path: "/app/sharing/{id}/alias", summary: "The name one party of an invitation gives the other (owner or guest only: 9100)",
                tag: "sharing", security: .appAndUser, parameters: [.query("user_alias", JSONSchema.string, required: true)],
                success: .ok(JSONSchema.object([:]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try SharingRoutes<Context>.id(context)
            let alias = try request.requiredQuery("user_alias")
            try await sharing.setAlias(user, id: id, alias: alias)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                // The reference names the segment {did}; the router needs the name its siblings use.
                method: .post, path: "/app/sharing/{id}/transfer",
                summary: "The owner hands the device ({id}: its did) to one of its guests (uid) and is unbound",
                tag: "sharing", security: .appAndUser, parameters: [.query("uid", JSONSchema.string, required: true)], success: .ok(JSONSchema.object([:]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let uid = try request.requiredQuery("uid")
            try await sharing.transfer(user, did: try context.pathParameter("id"), to: uid)
            return Response.json(.object([:]))
        }
    }

    static func id(_ context: some RequestContext) throws -> Int64 {
        guard let id = Int64(try context.pathParameter("id")), id > 0 else { throw CloudAPIError.sharingNotFound() }
        return id
    }
}

import Hummingbird
import TetherCloudProtocol
import TetherCore

/// The message centre (`gizwits-openapi.md` §2.2): `/app/messages…`, and what a user wants to
/// hear of a device (`/app/devices/{did}/notices`).
struct MessageRoutes<Context: RequestContext> {
    let accounts: AccountService
    let messages: MessageCentre

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/messages",
                summary: "The user's messages, newest first (type 1: sharing; Tether: 2 alerts, 3 faults, 4 offline, 5 homes); deleted ones are not listed",
                tag: "messages", security: .appAndUser,
                parameters: [
                    .query("type", JSONSchema.integer(minimum: 1, maximum: 5)), .query("limit", JSONSchema.integer(minimum: 1, maximum: 100)),
                    .query("skip", JSONSchema.integer(minimum: 0)),
                ],
                success: .ok(
                    JSONSchema.object(
                        [
                            "meta": JSONSchema.object(["total": JSONSchema.integer, "limit": JSONSchema.integer, "skip": JSONSchema.integer]),
                            "objects": JSONSchema.array(
                                JSONSchema.object(
                                    [
                                        "id": JSONSchema.integer, "type": JSONSchema.integer, "status": JSONSchema.integer(minimum: 0, maximum: 2),
                                        "content": JSONSchema.string, "data": JSONSchema.empty, "created_at": JSONSchema.integer,
                                        "updated_at": JSONSchema.integer,
                                    ], required: ["id", "type", "status", "content", "created_at", "updated_at"])),
                        ], required: ["meta", "objects"]))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let type = try request.optionalIntegerQuery("type", range: 1...5)
            let limit = try request.integerQuery("limit", default: 20, range: 1...100)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            let (list, total) = try await messages.list(user, type: type, limit: limit, skip: skip)
            return Response.json(["meta": ["total": .int(total), "limit": .int(limit), "skip": .int(skip)], "objects": .array(list.map(\.json))])
        }
        router.on(
            .init(
                method: .put, path: "/app/devices/{did}/notices",
                summary: "Tether: which of the device's happenings the user wants as messages: {kinds: [alert, error, offline]} ([] for none)",
                tag: "messages", security: .appAndUser,
                body: JSONSchema.object(["kinds": JSONSchema.array(JSONSchema.string)], required: ["kinds"]),
                success: .ok(JSONSchema.object(["kinds": JSONSchema.array(JSONSchema.string)], required: ["kinds"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(
                request,
                as: { json throws(CloudBodyError) in
                    guard let kinds = json["kinds"]?.arrayValue, kinds.count <= 3 else {
                        throw CloudBodyError(field: "kinds", "is an array of at most 3 names")
                    }
                    return try kinds.map { kind throws(CloudBodyError) in
                        guard let name = kind.stringValue else { throw CloudBodyError(field: "kinds", "holds names") }
                        return name
                    }
                })
            let kinds = try await messages.setNotices(user, did: try context.pathParameter("did"), kinds: body)
            return Response.json(["kinds": .array(kinds.map(JSONValue.string))])
        }
        router.on(
            .init(
                method: .put, path: "/app/messages/{id}", summary: "Mark a message read (status=1) or delete it (status=2); the receiver only (9101)",
                tag: "messages", security: .appAndUser, parameters: [.query("status", JSONSchema.integer(minimum: 1, maximum: 2), required: true)],
                success: .ok(JSONSchema.object([:]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            guard let id = Int64(try context.pathParameter("id")), id > 0 else { throw CloudAPIError.messageNotFound() }
            guard let status = try request.optionalIntegerQuery("status", range: 1...2).flatMap(MessageBody.Status.init(rawValue:)) else {
                throw CloudAPIError.formInvalid(detail: "status is 1 (read) or 2 (delete)")
            }
            try await messages.mark(user, id: id, status: status)
            return Response.json(.object([:]))
        }
    }
}

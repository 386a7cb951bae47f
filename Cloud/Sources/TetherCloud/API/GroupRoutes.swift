import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Groups (reference §2.6): `/app/group`, its devices and its control. Thin: every rule is in
/// `GroupService`.
struct GroupRoutes<Context: RequestContext> {
    let accounts: AccountService
    let groups: GroupService

    static var groupSchema: JSONValue {
        JSONSchema.object(
            [
                "id": JSONSchema.string, "group_name": JSONSchema.string, "product_key": JSONSchema.string, "verbose_name": JSONSchema.string,
                "created_at": JSONSchema.integer, "updated_at": JSONSchema.integer,
            ], required: ["id", "group_name", "product_key", "verbose_name", "created_at", "updated_at"])
    }

    static var resultSchema: JSONValue {
        JSONSchema.object(
            [
                "success": JSONSchema.array(JSONSchema.string), "failed": JSONSchema.array(JSONSchema.string),
                "detail": JSONSchema.array(
                    JSONSchema.object([
                        "did": JSONSchema.string, "error_code": JSONSchema.integer, "error_message": JSONSchema.string, "detail_msg": JSONSchema.string,
                    ])),
            ], required: ["success", "failed"])
    }

    static var didsSchema: JSONValue { JSONSchema.object(["dids": JSONSchema.array(JSONSchema.string, maxItems: 100)], required: ["dids"]) }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/group", summary: "Your groups", tag: "groups", security: .appAndUser, success: .ok(JSONSchema.array(Self.groupSchema))
            )
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(.array(try await groups.list(user).map(\.json)))
        }
        router.on(
            .init(
                method: .post, path: "/app/group", summary: "Make a group; with product_key, of that product's devices only (controllable as one)",
                tag: "groups", security: .appAndUser,
                body: JSONSchema.object(
                    ["group_name": JSONSchema.string("at most 64 bytes", maxLength: 64), "product_key": JSONSchema.string], required: ["group_name"]),
                success: .created(Self.groupSchema))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let fields = try await RequestForm.decode(request, as: GroupFieldsBody.init(json:))
            return Response.json(try await groups.create(user, fields).json, status: .created)
        }
        router.on(
            .init(
                method: .put, path: "/app/group/{id}", summary: "Rename one of your groups", tag: "groups", security: .appAndUser,
                body: JSONSchema.object(["group_name": JSONSchema.string("at most 64 bytes", maxLength: 64)], required: ["group_name"]),
                success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("id")
            let fields = try await RequestForm.decode(request, as: GroupFieldsBody.init(json:))
            try await groups.rename(user, id: id, fields)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .delete, path: "/app/group/{id}", summary: "Delete one of your groups (its devices stay bound)", tag: "groups",
                security: .appAndUser, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("id")
            try await groups.delete(user, id: id)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .get, path: "/app/group/{id}/devices", summary: "The group's devices", tag: "groups", security: .appAndUser,
                success: .ok(
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                "did": JSONSchema.string, "type": JSONSchema.string, "verbose_name": JSONSchema.string, "dev_alias": JSONSchema.string,
                                "product_key": JSONSchema.string,
                            ], required: ["did", "type", "verbose_name", "dev_alias", "product_key"]))))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("id")
            return Response.json(.array(try await groups.devices(user, id: id).map(\.json)))
        }
        router.on(
            .init(
                method: .post, path: "/app/group/{id}/devices",
                summary: "Add devices you are bound to (of the group's product); show_detail=1 says why each failed one failed", tag: "groups",
                security: .appAndUser, parameters: [.query("show_detail", ["type": "integer", "enum": [0, 1]])], body: Self.didsSchema,
                success: .ok(Self.resultSchema))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("id")
            let detail = try request.integerQuery("show_detail", default: 0, range: 0...1) == 1
            let body = try await RequestForm.decode(request, as: GroupDidsBody.init(json:))
            return Response.json(try await groups.add(user, id: id, dids: body.dids).json(detail: detail))
        }
        router.on(
            .init(
                method: .delete, path: "/app/group/{id}/devices", summary: "Take devices out of the group", tag: "groups", security: .appAndUser,
                body: Self.didsSchema, success: .ok(Self.resultSchema))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("id")
            let body = try await RequestForm.decode(request, as: GroupDidsBody.init(json:))
            return Response.json(try await groups.remove(user, id: id, dids: body.dids).json(detail: false))
        }
        router.on(
            .init(
                method: .post, path: "/app/group/{id}/control",
                summary: "Write to every device of a single-product group: a result per device (command_id in the ledger, or error_code)",
                tag: "groups", security: .appAndUser,
                body: JSONSchema.object(["attrs": JSONSchema.empty, "raw": JSONSchema.array(JSONSchema.integer), "queue_ttl": JSONSchema.integer]),
                success: .ok(
                    JSONSchema.array(
                        JSONSchema.object(
                            ["did": JSONSchema.string, "result": JSONSchema.boolean, "command_id": JSONSchema.integer, "error_code": JSONSchema.integer],
                            required: ["did", "result"]))))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("id")
            let body = try await RequestForm.decode(request, as: ControlBody.init(json:))
            return Response.json(.array(try await groups.control(user, id: id, body).map(\.json)))
        }
    }
}

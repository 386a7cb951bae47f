import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Linkage rules (reference §2.7): `/app/rules`, one rule, and `/app/rules/params`. Thin: every
/// rule about rules is in `RuleService`.
struct RuleRoutes<Context: RequestContext> {
    let accounts: AccountService
    let rules: RuleService

    static var ruleIDSchema: JSONValue { JSONSchema.object(["rule_id": JSONSchema.string], required: ["rule_id"]) }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/rules/params",
                summary: "The data points rules may read and write, per product: those of product_key (comma-separated), or of every device you are bound to",
                tag: "rules", security: .appAndUser, parameters: [.query("product_key", JSONSchema.string)],
                success: .ok(
                    [
                        "type": "object",
                        "additionalProperties": JSONSchema.array(
                            JSONSchema.object(
                                [
                                    "name": JSONSchema.string, "display_name": JSONSchema.string,
                                    "type": ["type": "string", "enum": ["bool", "int", "enum", "binary"]], "enum": JSONSchema.array(JSONSchema.string),
                                ], required: ["name", "display_name", "type", "enum"])),
                    ]))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let keys = (request.uri.queryParameters.get("product_key") ?? "").split(separator: ",").map { String($0) }.filter { !$0.isEmpty }
            guard keys.count <= 50 else { throw CloudAPIError.formInvalid(detail: "at most 50 products at once") }
            var object = JSONObject()
            for (key, params) in try await rules.params(user, productKeys: keys) { object[key] = .array(params.map(\.json)) }
            return Response.json(.object(object))
        }
        router.on(
            .init(
                method: .get, path: "/app/rules", summary: "Your rules, oldest first", tag: "rules", security: .appAndUser,
                parameters: [
                    .query("limit", JSONSchema.integer(minimum: 1, maximum: 1000)), .query("skip", JSONSchema.integer(minimum: 0, maximum: 1_000_000)),
                ],
                success: .ok(JSONSchema.object(["rules": JSONSchema.array(JSONSchema.ref("Rule"))], required: ["rules"])))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let limit = try request.integerQuery("limit", default: 20, range: 1...1000)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            return Response.json(["rules": .array(try await rules.list(user, limit: Int(limit), skip: Int(skip)).map(\.json))])
        }
        router.on(
            .init(
                method: .post, path: "/app/rules",
                summary: "Make a rule: when its device's event happens and a group of conditions holds, its outputs run (groups side by side)",
                tag: "rules", security: .appAndUser, body: JSONSchema.ref("Rule"), success: .created(JSONSchema.ref("Rule")))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let fields = try await RequestForm.decode(request, as: RuleFieldsBody.init(json:))
            return Response.json(try await rules.create(user, fields).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/rules/{rule_id}", summary: "One of your rules (Tether)", tag: "rules", security: .appAndUser,
                success: .ok(JSONSchema.ref("Rule")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await rules.rule(user, id: try context.pathParameter("rule_id")).json)
        }
        router.on(
            .init(
                method: .put, path: "/app/rules/{rule_id}", summary: "Replace one of your rules", tag: "rules", security: .appAndUser,
                body: JSONSchema.ref("Rule"), success: .ok(JSONSchema.ref("Rule")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("rule_id")
            let fields = try await RequestForm.decode(request, as: RuleFieldsBody.init(json:))
            return Response.json(try await rules.update(user, id: id, fields).json)
        }
        router.on(
            .init(
                method: .delete, path: "/app/rules/{rule_id}", summary: "Delete one of your rules (a run it started goes on)", tag: "rules",
                security: .appAndUser, success: .ok(Self.ruleIDSchema))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let id = try context.pathParameter("rule_id")
            try await rules.delete(user, id: id)
            return Response.json(["rule_id": .string(id)])
        }
    }
}

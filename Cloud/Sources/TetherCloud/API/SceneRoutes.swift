import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Scenes (reference §2.8): `/app/scene`, one scene, and its run (`…/task`). Thin: every rule is
/// in `SceneService`.
struct SceneRoutes<Context: RequestContext> {
    let accounts: AccountService
    let scenes: SceneService

    static var fieldsSchema: JSONValue {
        JSONSchema.object(
            [
                "scene_name": JSONSchema.string("at most 64 bytes", maxLength: 64), "remark": JSONSchema.string("at most 256 bytes", maxLength: 256),
                "tasks": JSONSchema.array(JSONSchema.ref("SceneTask"), maxItems: SceneFieldsBody.maximumTasks),
            ], required: ["scene_name"])
    }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/scene", summary: "Your scenes", tag: "scenes", security: .appAndUser,
                success: .ok(JSONSchema.array(JSONSchema.ref("Scene"))))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            return Response.json(.array(try await scenes.list(user).map(\.json)))
        }
        router.on(
            .init(
                method: .post, path: "/app/scene", summary: "Make a scene: device, group and delay tasks run in order", tag: "scenes",
                security: .appAndUser, body: Self.fieldsSchema, success: .created(JSONSchema.ref("Scene")))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let fields = try await RequestForm.decode(request, as: SceneFieldsBody.init(json:))
            return Response.json(try await scenes.create(user, fields).json, status: .created)
        }
        router.on(
            .init(
                method: .get, path: "/app/scene/{id}", summary: "One of your scenes (Tether)", tag: "scenes", security: .appAndUser,
                success: .ok(JSONSchema.ref("Scene")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await scenes.scene(user, id: try context.pathParameter("id")).json)
        }
        // The reference catalogues the update as PUT and documents it as POST: both are served.
        for method in [HTTPRequest.Method.put, .post] {
            router.on(
                .init(
                    method: method, path: "/app/scene/{id}", summary: "Replace one of your scenes' name, remark and tasks", tag: "scenes",
                    security: .appAndUser, body: Self.fieldsSchema, success: .ok(JSONSchema.ref("Scene")))
            ) { request, context in
                let user = try await accounts.authenticate(request)
                let id = try context.pathParameter("id")
                let fields = try await RequestForm.decode(request, as: SceneFieldsBody.init(json:))
                return Response.json(try await scenes.update(user, id: id, fields).json)
            }
        }
        router.on(
            .init(
                method: .delete, path: "/app/scene/{id}", summary: "Delete one of your scenes, its runs (one under way stops) and its schedules",
                tag: "scenes", security: .appAndUser, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            try await scenes.delete(user, id: try context.pathParameter("id"))
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .get, path: "/app/scene/{id}/task",
                summary: "The scene's latest run: status 0 running, 1 completed, 2 failed, 3 not executed; Tether adds each step's outcome",
                tag: "scenes", security: .appAndUser,
                success: .ok(
                    JSONSchema.object(
                        [
                            "status": JSONSchema.integer(minimum: 0, maximum: 3), "run_id": JSONSchema.string, "started_at": JSONSchema.integer,
                            "finished_at": JSONSchema.integer,
                            "steps": JSONSchema.array(
                                JSONSchema.object(
                                    [
                                        "lane": JSONSchema.integer, "step": JSONSchema.integer, "did": JSONSchema.string, "at": JSONSchema.integer,
                                        "command_id": JSONSchema.integer, "error_code": JSONSchema.integer, "message": JSONSchema.string,
                                    ], required: ["lane", "step", "did", "at"])),
                        ], required: ["status", "steps"])))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await scenes.status(user, id: try context.pathParameter("id")).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/scene/{id}/task",
                summary: "Run the scene: the tasks before its first delay are sent before the answer; answers the run's id (Tether)", tag: "scenes",
                security: .appAndUser, success: .ok(JSONSchema.object(["run_id": JSONSchema.string], required: ["run_id"])))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            return Response.json(try await scenes.start(user, id: try context.pathParameter("id")).json)
        }
    }
}

import Hummingbird
import TetherCloudProtocol
import TetherCore

/// The Open API's schedulers: per device (`/app/devices/{did}/scheduler`) and common
/// (`/app/common_scheduler`), with Tether's run logs and single reads. Thin: every rule is in
/// `ScheduleService`.
struct ScheduleRoutes<Context: RequestContext> {
    let accounts: AccountService
    let schedules: ScheduleService

    static var fieldsSchema: JSONValue {
        JSONSchema.object([
            "date": JSONSchema.string("YYYY-MM-DD, for repeat none"), "time": JSONSchema.string("HH:MM, in tz"),
            "repeat": JSONSchema.string("none, day (with days), or days of the week such as mon,wed"),
            "days": JSONSchema.array(JSONSchema.string), "start_date": JSONSchema.string, "end_date": JSONSchema.string,
            "enabled": JSONSchema.boolean, "remark": JSONSchema.string("at most 256 bytes", maxLength: 256),
            "attrs": JSONSchema.empty, "raw": JSONSchema.string, "binary_coding": ["type": "string", "enum": ["hex", "base64"]],
            "tz": JSONSchema.string("Tether: an IANA time zone; UTC when absent"),
            "queue_ttl": JSONSchema.integer(minimum: 0, maximum: 604_800),
            "did": JSONSchema.string, "group_id": JSONSchema.string, "scene_id": JSONSchema.string,
        ])
    }

    static var page: [APIOperation.Parameter] {
        [.query("limit", JSONSchema.integer(minimum: 1, maximum: 1000)), .query("skip", JSONSchema.integer(minimum: 0, maximum: 1_000_000))]
    }

    func register(on router: DocumentedRouter<Context>) {
        registerDeviceScheduler(on: router)
        registerCommonScheduler(on: router)
    }

    private func registerDeviceScheduler(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}/scheduler", summary: "Your schedules of the device, oldest first", tag: "schedules",
                security: .appAndUser, parameters: Self.page, success: .ok(JSONSchema.array(JSONSchema.ref("Schedule"))))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            let limit = try request.integerQuery("limit", default: 20, range: 1...1000)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            let found = try await schedules.list(user, device: did, limit: Int(limit), skip: Int(skip))
            return Response.json(.array(found.map(\.json)))
        }
        router.on(
            .init(
                method: .post, path: "/app/devices/{did}/scheduler",
                summary: "Schedule a write to the device: once, weekly or monthly at a time of day in tz; answers the schedule with its id",
                tag: "schedules", security: .appAndUser, body: Self.fieldsSchema, success: .created(JSONSchema.ref("Schedule")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            let fields = try await RequestForm.decode(request) { json throws(CloudBodyError) in try ScheduleFieldsBody(json: json, did: did) }
            return Response.json(try await schedules.create(user, fields).json, status: .created)
        }
        registerOne(on: router, under: "/app/devices/{did}/scheduler", perDevice: true)
    }

    private func registerCommonScheduler(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .get, path: "/app/common_scheduler", summary: "Your schedules, oldest first; did, group_id and scene_id narrow them",
                tag: "schedules", security: .appAndUser,
                parameters: Self.page + [.query("did", JSONSchema.string), .query("group_id", JSONSchema.string), .query("scene_id", JSONSchema.string)],
                success: .ok(JSONSchema.array(JSONSchema.ref("Schedule"))))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let limit = try request.integerQuery("limit", default: 20, range: 1...1000)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            let found = try await schedules.list(
                user, did: request.query("did"), groupID: request.query("group_id"), sceneID: request.query("scene_id"), limit: Int(limit), skip: Int(skip))
            return Response.json(.array(found.map(\.json)))
        }
        router.on(
            .init(
                method: .post, path: "/app/common_scheduler",
                summary: "Schedule a device (did; group_id and scene_id are refused until groups and scenes exist); answers the schedule with its id",
                tag: "schedules", security: .appAndUser, body: Self.fieldsSchema, success: .created(JSONSchema.ref("Schedule")))
        ) { request, _ in
            let user = try await accounts.authenticate(request)
            let fields = try await RequestForm.decode(request) { json throws(CloudBodyError) in try ScheduleFieldsBody(json: json) }
            return Response.json(try await schedules.create(user, fields).json, status: .created)
        }
        registerOne(on: router, under: "/app/common_scheduler", perDevice: false)
    }

    /// One schedule under either path: read (Tether), replaced, deleted, and its run log
    /// (Tether). Under the per-device path it must be a schedule of that device.
    private func registerOne(on router: DocumentedRouter<Context>, under base: String, perDevice: Bool) {
        let ofDevice = perDevice ? " of the device" : ""
        @Sendable func pathDid(_ context: Context) throws -> String? { perDevice ? try context.pathParameter("did") : nil }
        router.on(
            .init(
                method: .get, path: base + "/{id}", summary: "Tether: one of your schedules" + ofDevice, tag: "schedules", security: .appAndUser,
                success: .ok(JSONSchema.ref("Schedule")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let (did, id) = (try pathDid(context), try context.pathParameter("id"))
            return Response.json(try await schedules.schedule(user, id: id, pathDid: did).json)
        }
        router.on(
            .init(
                method: .put, path: base + "/{id}", summary: "Replace one of your schedules\(ofDevice) (its id and run log stay)", tag: "schedules",
                security: .appAndUser, body: Self.fieldsSchema, success: .ok(JSONSchema.ref("Schedule")))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let (did, id) = (try pathDid(context), try context.pathParameter("id"))
            let fields = try await RequestForm.decode(request) { json throws(CloudBodyError) in try ScheduleFieldsBody(json: json, did: did) }
            return Response.json(try await schedules.update(user, id: id, pathDid: did, fields).json)
        }
        router.on(
            .init(
                method: .delete, path: base + "/{id}", summary: "Delete one of your schedules\(ofDevice), with its run log", tag: "schedules",
                security: .appAndUser, success: .ok(JSONSchema.empty))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let (did, id) = (try pathDid(context), try context.pathParameter("id"))
            try await schedules.delete(user, id: id, pathDid: did)
            return Response.json(.object([:]))
        }
        router.on(
            .init(
                method: .get, path: base + "/{id}/logs",
                summary: "Tether: the schedule's runs, newest first (planned and fired times, the ledger's command and its state)", tag: "schedules",
                security: .appAndUser, parameters: Self.page, success: .ok(JSONSchema.array(JSONSchema.ref("ScheduleRun"))))
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let (did, id) = (try pathDid(context), try context.pathParameter("id"))
            let limit = try request.integerQuery("limit", default: 20, range: 1...1000)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            let found = try await schedules.runs(user, id: id, pathDid: did, limit: Int(limit), skip: Int(skip))
            return Response.json(.array(found.map(\.json)))
        }
    }
}

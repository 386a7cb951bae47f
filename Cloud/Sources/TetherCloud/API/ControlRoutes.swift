import Hummingbird
import TetherCloudProtocol
import TetherCore

/// Control and history of bound devices: `/app/control/{did}`, `/app/devdata/{did}/latest`,
/// `/app/devices/{did}/raw_data`, and the Tether extensions for the command ledger, service
/// calls and RRPC.
struct ControlRoutes<Context: RequestContext> {
    let accounts: AccountService
    let control: ControlService
    let rrpc: RRPCService
    let userTopics: UserTopicService
    let history: DeviceHistory

    static var commandAnswer: JSONValue {
        JSONSchema.object(["command_id": JSONSchema.integer, "state": JSONSchema.string], required: ["command_id", "state"])
    }

    func register(on router: DocumentedRouter<Context>) {
        router.on(
            .init(
                method: .post, path: "/app/control/{did}",
                summary:
                    "Write data points ({attrs}) or send raw bytes ({raw}); Tether: queue_ttl (s) waits for an offline device, the answer names the ledger entry",
                tag: "control", security: .appAndUser,
                body: JSONSchema.object([
                    "attrs": JSONSchema.empty, "raw": JSONSchema.array(JSONSchema.integer(minimum: 0, maximum: 255), maxItems: 65_536),
                    "queue_ttl": JSONSchema.integer(minimum: 0, maximum: 7 * 24 * 3600),
                ]),
                success: .ok(Self.commandAnswer)
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            let body = try await RequestForm.decode(request, as: ControlBody.init(json:))
            let command: ControlService.Request =
                switch body.command {
                case .attrs(let attrs): .attrs(attrs)
                case .raw(let bytes): .raw(bytes)
                }
            let record = try await control.control(user, did: did, command, queueSeconds: body.queueTTL)
            return Response.json(CommandAcceptedBody(commandID: record.id, state: record.state.rawValue).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/devices/{did}/services/{identifier}",
                summary: "Tether: call a service of the device's model with {params}; queue_ttl as for control",
                tag: "control", security: .appAndUser,
                body: JSONSchema.object(["params": JSONSchema.empty, "queue_ttl": JSONSchema.integer(minimum: 0, maximum: 7 * 24 * 3600)]),
                success: .ok(Self.commandAnswer)
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let body = try await RequestForm.decode(request, as: ServiceCallBody.init(json:))
            let did = try context.pathParameter("did")
            let identifier = try context.pathParameter("identifier")
            let record = try await control.control(user, did: did, .service(identifier: identifier, params: body.params), queueSeconds: body.queueTTL)
            return Response.json(CommandAcceptedBody(commandID: record.id, state: record.state.rawValue).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/devices/{did}/rrpc",
                summary:
                    "Tether: a synchronous call (Alink RRPC): payload_base64 to the device, its answer back; topic for custom RRPC; timeout_ms 100…30000 (5000)",
                tag: "control", security: .appAndUser,
                body: JSONSchema.object(
                    [
                        "payload_base64": JSONSchema.string, "topic": JSONSchema.string,
                        "timeout_ms": JSONSchema.integer(minimum: RRPCCallBody.timeoutRangeMs.lowerBound, maximum: RRPCCallBody.timeoutRangeMs.upperBound),
                    ], required: ["payload_base64"]),
                success: .ok(
                    JSONSchema.object(["message_id": JSONSchema.string, "payload_base64": JSONSchema.string], required: ["message_id", "payload_base64"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            let body = try await RequestForm.decode(request, as: RRPCCallBody.init(json:))
            let call = RRPCService.Request(payload: body.payload, topic: body.topic, timeoutMs: body.timeoutMs ?? RRPCCallBody.defaultTimeoutMs)
            return Response.json(try await rrpc.call(user, did: did, call).json)
        }
        router.on(
            .init(
                method: .post, path: "/app/devices/{did}/publish",
                summary:
                    "Tether: bytes to one of the device's custom topics (/{pk}/{dn}/user/…) of a class its devices subscribe to; delivered if it is connected and subscribed",
                tag: "control", security: .appAndUser,
                body: JSONSchema.object(
                    ["topic": JSONSchema.string, "payload_base64": JSONSchema.string, "qos": JSONSchema.integer(minimum: 0, maximum: 1)],
                    required: ["topic", "payload_base64"]),
                success: .ok(JSONSchema.object(["topic": JSONSchema.string, "qos": JSONSchema.integer], required: ["topic", "qos"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            let body = try await RequestForm.decode(request, as: DevicePublishBody.init(json:))
            try await userTopics.publish(user, did: did, body)
            return Response.json(["topic": .string(body.topic), "qos": .int(Int64(body.qos))])
        }
        router.on(
            .init(
                method: .get, path: "/app/commands/{id}", summary: "Tether: one command of the ledger and where it is",
                tag: "control", security: .appAndUser, success: .ok(JSONSchema.ref("Command"))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let text = try context.pathParameter("id")
            guard let id = Int64(text) else { throw CloudAPIError.formInvalid(detail: "a command id is a number") }
            return Response.json(try await control.command(user, id: id).json)
        }
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}/commands", summary: "Tether: the device's commands, newest first",
                tag: "control", security: .appAndUser,
                parameters: [
                    .query("limit", JSONSchema.integer(minimum: 1, maximum: 1000)), .query("skip", JSONSchema.integer(minimum: 0, maximum: 1_000_000)),
                ],
                success: .ok(JSONSchema.object(["commands": JSONSchema.array(JSONSchema.ref("Command"))], required: ["commands"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            // Typed throws evaluated inside async call arguments crash the 6.3 optimizer
            // (CoroSplit, emitSetAndGetSwiftErrorValueAround): read them into locals first.
            let did = try context.pathParameter("did")
            let limit = try request.integerQuery("limit", default: 20, range: 1...1000)
            let skip = try request.integerQuery("skip", default: 0, range: 0...1_000_000)
            let records = try await control.commands(user, did: did, limit: Int(limit), skip: Int(skip))
            return Response.json(["commands": .array(records.map(\.json))])
        }
        router.on(
            .init(
                method: .get, path: "/app/devdata/{did}/latest", summary: "The device's latest report (updated_at 0: none in 24 h)",
                tag: "devices", security: .appAndUser,
                success: .ok(
                    JSONSchema.object(
                        ["did": JSONSchema.string, "updated_at": JSONSchema.integer, "attr": JSONSchema.empty], required: ["did", "updated_at", "attr"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            guard try await control.isBound(user, did: did) else { throw CloudAPIError.deviceNotBound() }
            let dayAgo = Clock.unixMilliseconds() - 24 * 3600 * 1000
            guard let status = try await history.status(did: did), status.updatedMs >= dayAgo else {
                return Response.json(LatestStatusBody(did: did, updatedAt: 0, attrs: [:]).json)
            }
            return Response.json(LatestStatusBody(did: did, updatedAt: status.updatedMs / 1000, attrs: status.attrs).json)
        }
        router.on(
            .init(
                method: .get, path: "/app/devices/{did}/raw_data",
                summary: "The device's traffic (type=cmd: app2dev, dev2app) or connectivity (type=online) log",
                tag: "devices", security: .appAndUser,
                parameters: [
                    .query("type", ["type": "string", "enum": ["cmd", "online"]], required: true),
                    .query("start_time", JSONSchema.integer(minimum: 0), required: true),
                    .query("end_time", JSONSchema.integer(minimum: 0), required: true),
                    .query("skip", JSONSchema.integer(minimum: 0, maximum: 5000)),
                    .query("limit", JSONSchema.integer(minimum: 1, maximum: 1000)),
                    .query("sort", ["type": "string", "enum": ["asc", "desc"]]),
                ],
                success: .ok(
                    JSONSchema.object(
                        [
                            "meta": JSONSchema.object(
                                [
                                    "did": JSONSchema.string, "type": JSONSchema.string, "start_time": JSONSchema.integer, "end_time": JSONSchema.integer,
                                    "skip": JSONSchema.integer, "limit": JSONSchema.integer, "sort": JSONSchema.string, "total": JSONSchema.integer,
                                ], required: ["did", "type", "start_time", "end_time", "skip", "limit", "sort", "total"]),
                            "objects": JSONSchema.array(
                                JSONSchema.object(
                                    [
                                        "type": JSONSchema.string, "ip": JSONSchema.string, "payload_bin": JSONSchema.string, "timestamp": ["type": "number"],
                                    ], required: ["type", "ip", "payload_bin", "timestamp"])),
                        ], required: ["meta", "objects"]))
            )
        ) { request, context in
            let user = try await accounts.authenticate(request)
            let did = try context.pathParameter("did")
            guard try await control.isBound(user, did: did) else { throw CloudAPIError.deviceNotBound() }
            return Response.json(try await rawData(request, did: did))
        }
    }

    /// The reference's window rules: inside the last 7 days, end after start, span under 48 h,
    /// `skip + limit` ≤ 5000.
    private func rawData(_ request: Request, did: String) async throws -> JSONValue {
        let type = request.query("type") ?? ""
        let kinds: [DeviceHistory.Kind]
        switch type {
        case "cmd": kinds = [.appToDevice, .deviceToApp]
        case "online": kinds = [.online, .reOnline, .offline]
        default: throw CloudAPIError.formInvalid(detail: "type is cmd or online")
        }
        let now = Clock.unixNow()
        let start = try request.integerQuery("start_time", default: -1, range: -1...Int64.max)
        let end = try request.integerQuery("end_time", default: -1, range: -1...Int64.max)
        guard start >= 0, end >= 0 else { throw CloudAPIError.formInvalid(detail: "start_time and end_time are required (Unix seconds)") }
        guard end > start, end <= now + 60, start >= now - 7 * 24 * 3600, end - start < 48 * 3600 else {
            throw CloudAPIError.formInvalid(detail: "the window must lie in the last 7 days, end after start, and span under 48 hours")
        }
        let skip = try request.integerQuery("skip", default: 0, range: 0...5000)
        let limit = try request.integerQuery("limit", default: 20, range: 1...1000)
        guard skip + limit <= 5000 else { throw CloudAPIError.formInvalid(detail: "skip + limit is at most 5000") }
        let sort = request.query("sort") ?? "desc"
        guard sort == "asc" || sort == "desc" else { throw CloudAPIError.formInvalid(detail: "sort is asc or desc") }
        let (total, objects) = try await history.entries(
            .init(
                did: did, kinds: kinds, startMs: start * 1000, endMs: end * 1000 + 999, skip: Int(skip), limit: Int(limit), ascending: sort == "asc"
            ))
        return [
            "meta": [
                "did": .string(did), "type": .string(type), "start_time": .int(start), "end_time": .int(end), "skip": .int(skip),
                "limit": .int(limit), "sort": .string(sort), "total": .int(Int64(total)),
            ],
            "objects": .array(objects),
        ]
    }
}

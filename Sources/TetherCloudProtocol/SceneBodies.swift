public import TetherCore

/// What a scene's device or group task writes. Scenes code values their own way (reference §2.8):
/// an enum data point by its index (a label is taken too), a binary one as Base64 text, `raw` as
/// Base64 (or hex with `binary_coding`).
public enum SceneCommand: Sendable, Hashable {
    case attrs(JSONObject)
    case raw([UInt8], base64: Bool = true)
}

/// One step of a scene: wait, write to a device, or write to every device of a single-product
/// group.
public enum SceneTask: Sendable, Hashable {
    case delay(seconds: Int64)
    case device(did: String, SceneCommand)
    case group(id: String, SceneCommand)

    /// The longest delay a task may hold (reference: 3600 s).
    public static let maximumDelay: Int64 = 3600
}

/// A scene's task as apps write it (`task_type`, `time`, `did`, `group_id`, `attrs`|`raw`) and
/// read it back, with what the cloud adds when it answers (`product_key`, `group_name`,
/// `dev_alias`, `dev_remark`, `verbose_name`).
public struct SceneTaskBody: Sendable, Hashable {
    public var task: SceneTask
    public var productKey: String
    public var groupName: String
    public var deviceAlias: String
    public var deviceRemark: String
    public var productName: String

    public init(
        _ task: SceneTask, productKey: String = "", groupName: String = "", deviceAlias: String = "", deviceRemark: String = "", productName: String = ""
    ) {
        self.task = task
        self.productKey = productKey
        self.groupName = groupName
        self.deviceAlias = deviceAlias
        self.deviceRemark = deviceRemark
        self.productName = productName
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        try self.init(reader: try BodyReader(json))
    }

    init(reader: BodyReader) throws(CloudBodyError) {
        let type = try reader.text("task_type")
        let task: SceneTask
        switch type {
        case "delay":
            guard let seconds = try reader.lenientInt("time"), (1...SceneTask.maximumDelay).contains(seconds) else {
                throw CloudBodyError(field: reader.name("time"), "must be 1 to \(SceneTask.maximumDelay) seconds")
            }
            task = .delay(seconds: seconds)
        case "device":
            let did = try reader.text("did")
            guard did.utf8.count <= 64 else { throw CloudBodyError(field: reader.name("did"), "must be at most 64 bytes") }
            task = .device(did: did, try Self.command(reader))
        case "group":
            let id = try reader.text("group_id")
            guard id.utf8.count <= 64 else { throw CloudBodyError(field: reader.name("group_id"), "must be at most 64 bytes") }
            task = .group(id: id, try Self.command(reader))
        default:
            throw CloudBodyError(field: reader.name("task_type"), "must be delay, device or group")
        }
        self.init(
            task, productKey: try reader.optionalString("product_key") ?? "", groupName: try reader.optionalString("group_name") ?? "",
            deviceAlias: try reader.optionalString("dev_alias") ?? "", deviceRemark: try reader.optionalString("dev_remark") ?? "",
            productName: try reader.optionalString("verbose_name") ?? "")
    }

    private static func command(_ reader: BodyReader) throws(CloudBodyError) -> SceneCommand {
        let coding = try reader.optionalString("binary_coding") ?? "base64"
        guard coding == "hex" || coding == "base64" else { throw CloudBodyError(field: reader.name("binary_coding"), "must be hex or base64") }
        switch (try reader.optionalObject("attrs"), try reader.optionalString("raw")) {
        case (let attrs?, nil):
            guard !attrs.isEmpty, attrs.count <= 100 else { throw CloudBodyError(field: reader.name("attrs"), "must name 1 to 100 data points") }
            return .attrs(attrs)
        case (nil, let text?):
            let bytes = coding == "base64" ? [UInt8](tetherBase64: text) : [UInt8](tetherHex: text)
            guard let bytes, !bytes.isEmpty, bytes.count <= 65_536 else {
                throw CloudBodyError(field: reader.name("raw"), "must be 1 to 65536 bytes in \(coding)")
            }
            return .raw(bytes, base64: coding == "base64")
        case (nil, nil):
            throw CloudBodyError(field: reader.name("attrs"), "or raw is required")
        case (.some, .some):
            throw CloudBodyError(field: reader.name("raw"), "cannot be sent with attrs")
        }
    }

    /// The task as apps write it (`described` false) or as the cloud answers it.
    public func json(described: Bool = true) -> JSONValue {
        var object: JSONObject
        switch task {
        case .delay(let seconds):
            object = ["task_type": "delay", "time": .int(seconds)]
        case .device(let did, let command):
            object = ["task_type": "device", "did": .string(did)]
            Self.add(command, to: &object)
        case .group(let id, let command):
            object = ["task_type": "group", "group_id": .string(id)]
            Self.add(command, to: &object)
        }
        if described {
            object["product_key"] = .string(productKey)
            object["group_name"] = .string(groupName)
            object["dev_alias"] = .string(deviceAlias)
            object["dev_remark"] = .string(deviceRemark)
            object["verbose_name"] = .string(productName)
        }
        return .object(object)
    }

    private static func add(_ command: SceneCommand, to object: inout JSONObject) {
        switch command {
        case .attrs(let attrs):
            object["attrs"] = .object(attrs)
        case .raw(let bytes, let base64):
            object["raw"] = .string(base64 ? bytes.tetherBase64 : bytes.tetherHex)
            object["binary_coding"] = .string(base64 ? "base64" : "hex")
        }
    }
}

/// `POST /app/scene` and `PUT`/`POST /app/scene/{id}`: a scene's name, remark and tasks, run in
/// order. The reference's request table lists one task's fields at the top level; such a body
/// is read as a scene of that one task.
public struct SceneFieldsBody: Sendable, Hashable {
    public var name: String
    public var remark: String
    public var tasks: [SceneTaskBody]

    public static let maximumName = 64
    public static let maximumRemark = 256
    public static let maximumTasks = 50

    public init(name: String, remark: String = "", tasks: [SceneTaskBody]) {
        self.name = name
        self.remark = remark
        self.tasks = tasks
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let name = try reader.text("scene_name")
        guard name.utf8.count <= Self.maximumName else { throw CloudBodyError(field: "scene_name", "must be at most \(Self.maximumName) bytes") }
        let remark = try reader.optionalString("remark") ?? ""
        guard remark.utf8.count <= Self.maximumRemark else { throw CloudBodyError(field: "remark", "must be at most \(Self.maximumRemark) bytes") }
        let tasks: [SceneTaskBody]
        if reader.value("tasks") == nil, reader.value("task_type") != nil {
            tasks = [try SceneTaskBody(reader: reader)]
        } else {
            tasks = try reader.objects("tasks", maximum: Self.maximumTasks).map { item throws(CloudBodyError) in try SceneTaskBody(reader: item) }
        }
        self.init(name: name, remark: remark, tasks: tasks)
    }

    public var json: JSONValue {
        ["scene_name": .string(name), "remark": .string(remark), "tasks": .array(tasks.map { $0.json(described: false) })]
    }
}

/// A scene as `GET /app/scene` lists it. Times are Unix seconds.
public struct SceneBody: Sendable, Hashable {
    public var id: String
    public var name: String
    public var remark: String
    public var tasks: [SceneTaskBody]
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: String, name: String, remark: String, tasks: [SceneTaskBody], createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.name = name
        self.remark = remark
        self.tasks = tasks
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.text("id"), name: try reader.string("scene_name"), remark: try reader.optionalString("remark") ?? "",
            tasks: try reader.list("tasks", maximum: SceneFieldsBody.maximumTasks).map { item throws(CloudBodyError) in try SceneTaskBody(reader: item) },
            createdAt: try reader.optionalInt("created_at") ?? 0, updatedAt: try reader.optionalInt("updated_at") ?? 0)
    }

    public var json: JSONValue {
        [
            "id": .string(id), "scene_name": .string(name), "remark": .string(remark), "tasks": .array(tasks.map { $0.json() }),
            "created_at": .int(createdAt), "updated_at": .int(updatedAt),
        ]
    }
}

/// Where a scene's latest run is (`GET /app/scene/{id}/task`): the reference's `status`, and
/// Tether's run id, times (Unix milliseconds) and what each step did.
public struct SceneRunBody: Sendable, Hashable {
    public enum Status: Int, Sendable, Hashable, CaseIterable {
        case running = 0
        case completed = 1
        case failed = 2
        case notExecuted = 3
    }

    public var status: Status
    public var runID: String?
    public var startedAt: Int64?
    public var finishedAt: Int64?
    public var steps: [AutomationStepBody]

    public init(status: Status, runID: String? = nil, startedAt: Int64? = nil, finishedAt: Int64? = nil, steps: [AutomationStepBody] = []) {
        self.status = status
        self.runID = runID
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.steps = steps
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        guard let status = Status(rawValue: Int(clamping: try reader.int("status"))) else { throw CloudBodyError(field: "status", "must be 0 to 3") }
        self.init(
            status: status, runID: try reader.optionalString("run_id"), startedAt: try reader.optionalInt("started_at"),
            finishedAt: try reader.optionalInt("finished_at"),
            steps: try reader.list("steps", maximum: 100_000).map { item throws(CloudBodyError) in try AutomationStepBody(reader: item) })
    }

    public var json: JSONValue {
        var object: JSONObject = ["status": .int(Int64(status.rawValue)), "steps": .array(steps.map(\.json))]
        if let runID { object["run_id"] = .string(runID) }
        if let startedAt { object["started_at"] = .int(startedAt) }
        if let finishedAt { object["finished_at"] = .int(finishedAt) }
        return .object(object)
    }
}

/// What one step of an automation's run did to one device (a group's step has one per device):
/// the ledger entry it made, or the code it was refused with. `lane` is the parallel sequence
/// the step is in (a scene has one), `step` its place in it; `at` Unix milliseconds.
public struct AutomationStepBody: Sendable, Hashable {
    public var lane: Int
    public var step: Int
    public var did: String
    public var at: Int64
    public var commandID: Int64?
    public var errorCode: Int?
    public var message: String

    public init(lane: Int, step: Int, did: String, at: Int64, commandID: Int64? = nil, errorCode: Int? = nil, message: String = "") {
        self.lane = lane
        self.step = step
        self.did = did
        self.at = at
        self.commandID = commandID
        self.errorCode = errorCode
        self.message = message
    }

    init(reader: BodyReader) throws(CloudBodyError) {
        self.init(
            lane: Int(clamping: try reader.int("lane")), step: Int(clamping: try reader.int("step")), did: try reader.optionalString("did") ?? "",
            at: try reader.int("at"), commandID: try reader.optionalInt("command_id"),
            errorCode: try reader.optionalInt("error_code").map { Int(clamping: $0) }, message: try reader.optionalString("message") ?? "")
    }

    public var succeeded: Bool { errorCode == nil }

    public var json: JSONValue {
        var object: JSONObject = ["lane": .int(Int64(lane)), "step": .int(Int64(step)), "did": .string(did), "at": .int(at)]
        if let commandID { object["command_id"] = .int(commandID) }
        if let errorCode { object["error_code"] = .int(Int64(errorCode)) }
        if !message.isEmpty { object["message"] = .string(message) }
        return .object(object)
    }
}

/// `POST /app/scene/{id}/task` (Tether answers the run it started).
public struct SceneStartBody: Sendable, Hashable {
    public var runID: String

    public init(runID: String) { self.runID = runID }

    public init(json: JSONValue) throws(CloudBodyError) {
        self.init(runID: try BodyReader(json).text("run_id"))
    }

    public var json: JSONValue { ["run_id": .string(runID)] }
}

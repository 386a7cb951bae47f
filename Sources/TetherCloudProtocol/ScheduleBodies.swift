public import TetherCore

/// What a schedule does when it runs: write data points, or send bytes. A scene's schedule has
/// no command of its own.
public enum ScheduleCommand: Sendable, Hashable {
    /// Data points by name, as a control writes them (enums by label, binary data points as hex).
    case attrs(JSONObject)
    /// Transparent bytes; `base64` keeps the coding the app wrote them in (`binary_coding`).
    case raw([UInt8], base64: Bool = false)
}

/// What a schedule acts on: a device, a group or a scene (common schedules).
public enum ScheduleTarget: Sendable, Hashable {
    case device(did: String)
    case group(id: String)
    case scene(id: String)

    public var did: String? { if case .device(let did) = self { did } else { nil } }
}

/// The fields of a schedule, as an app writes them (`POST`/`PUT` of
/// `/app/devices/{did}/scheduler` and `/app/common_scheduler`) and reads them back: the Open
/// API's `date`, `time`, `repeat`, `days`, `start_date`, `end_date`, `enabled`, `remark`,
/// `attrs`/`raw` (hex, or Base64 with `binary_coding`), and Tether's `tz` (an IANA zone, UTC
/// when absent: times are the zone's wall-clock times) and `queue_ttl` (seconds a run waits for
/// an offline device; 0, the default, fails the run at once).
public struct ScheduleFieldsBody: Sendable, Hashable {
    public var target: ScheduleTarget
    public var recurrence: ScheduleRecurrence
    public var enabled: Bool
    public var remark: String
    public var command: ScheduleCommand?
    public var queueSeconds: Int64

    public static let maximumRemark = 256

    public init(
        target: ScheduleTarget, recurrence: ScheduleRecurrence, enabled: Bool = true, remark: String = "", command: ScheduleCommand?,
        queueSeconds: Int64 = 0
    ) {
        self.target = target
        self.recurrence = recurrence
        self.enabled = enabled
        self.remark = remark
        self.command = command
        self.queueSeconds = queueSeconds
    }

    /// Reads a request. `did` is the path's device (`/app/devices/{did}/scheduler`); without it
    /// the body names the target, the first non-empty of `did`, `group_id` and `scene_id` (as
    /// the Open API has it).
    public init(json: JSONValue, did pathDid: String? = nil) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let target: ScheduleTarget
        if let pathDid {
            target = .device(did: pathDid)
        } else if let did = try reader.optionalString("did"), !did.isEmpty {
            target = .device(did: did)
        } else if let group = try Self.identifier(reader, "group_id") {
            target = .group(id: group)
        } else if let scene = try Self.identifier(reader, "scene_id") {
            target = .scene(id: scene)
        } else {
            throw CloudBodyError(field: "did", "or group_id or scene_id is required")
        }
        let zoneName = try reader.optionalString("tz") ?? "UTC"
        guard let zone = ScheduleZone(identifier: zoneName) else {
            throw CloudBodyError(field: "tz", "is not a time zone this cloud knows (an IANA name such as Europe/Berlin)")
        }
        let timeText = try reader.string("time")
        guard let time = ScheduleTime(parsing: timeText) else { throw CloudBodyError(field: "time", "must be HH:MM (00:00 to 23:59)") }
        let repetition = try Self.repetition(reader)
        let startDate = try Self.date(reader, "start_date")
        let endDate = try Self.date(reader, "end_date")
        if let startDate, let endDate, endDate < startDate { throw CloudBodyError(field: "end_date", "is before start_date") }
        let remark = try reader.optionalString("remark") ?? ""
        guard remark.utf8.count <= Self.maximumRemark else { throw CloudBodyError(field: "remark", "must be at most \(Self.maximumRemark) bytes") }
        var command: ScheduleCommand?
        let attrs = try reader.optionalObject("attrs")
        let rawText = try reader.optionalString("raw")
        let coding = try reader.optionalString("binary_coding") ?? "hex"
        guard coding == "hex" || coding == "base64" else { throw CloudBodyError(field: "binary_coding", "must be hex or base64") }
        switch (attrs, rawText) {
        case (let attrs?, nil):
            guard !attrs.isEmpty else { throw CloudBodyError(field: "attrs", "must name at least one data point") }
            command = .attrs(attrs)
        case (nil, let text?):
            let bytes = coding == "base64" ? [UInt8](tetherBase64: text) : [UInt8](tetherHex: text)
            guard let bytes, !bytes.isEmpty, bytes.count <= 65_536 else { throw CloudBodyError(field: "raw", "must be 1 to 65536 bytes in \(coding)") }
            command = .raw(bytes, base64: coding == "base64")
        case (nil, nil):
            command = nil
        case (.some, .some):
            throw CloudBodyError(field: "raw", "cannot be sent with attrs")
        }
        if case .scene = target {
            // The Open API ignores a scene schedule's command: the scene's tasks are the command.
            command = nil
        } else if command == nil {
            throw CloudBodyError(field: "attrs", "or raw is required")
        }
        let queueSeconds = try reader.optionalInt("queue_ttl") ?? 0
        guard queueSeconds >= 0 else { throw CloudBodyError(field: "queue_ttl", "must not be negative") }
        self.init(
            target: target,
            recurrence: ScheduleRecurrence(repetition: repetition, time: time, zone: zone, startDate: startDate, endDate: endDate),
            enabled: try reader.optionalBool("enabled") ?? true, remark: remark, command: command, queueSeconds: queueSeconds)
    }

    private static func identifier(_ reader: BodyReader, _ key: String) throws(CloudBodyError) -> String? {
        switch reader.value(key) {
        case .string(let text)? where !text.isEmpty: return text
        case .int(let number)?: return String(number)
        case nil, .string?: return nil
        default: throw CloudBodyError(field: key, "must be a string")
        }
    }

    private static func date(_ reader: BodyReader, _ key: String) throws(CloudBodyError) -> ScheduleDate? {
        guard let text = try reader.optionalString(key), !text.isEmpty else { return nil }
        guard let date = ScheduleDate(parsing: text) else { throw CloudBodyError(field: key, "must be a date YYYY-MM-DD") }
        return date
    }

    private static func repetition(_ reader: BodyReader) throws(CloudBodyError) -> ScheduleRepeat {
        let name = Self.trimmed(try reader.optionalString("repeat") ?? "none").lowercased()
        switch name {
        case "none", "":
            guard let date = try date(reader, "date") else { throw CloudBodyError(field: "date", "is required for a one-time schedule") }
            return .once(date)
        case "day":
            guard let value = reader.value("days"), let items = value.arrayValue, !items.isEmpty, items.count <= 31 else {
                throw CloudBodyError(field: "days", "must list 1 to 31 days of the month for repeat \"day\"")
            }
            var days = Set<Int>()
            for (index, item) in items.enumerated() {
                let day: Int? =
                    switch item {
                    case .string(let text): Int(text)
                    case .int(let number): Int(exactly: number)
                    default: nil
                    }
                guard let day, (1...31).contains(day) else { throw CloudBodyError(field: "days[\(index)]", "must be a day of the month, 1 to 31") }
                days.insert(day)
            }
            return .monthly(days)
        default:
            var days = Set<ScheduleWeekday>()
            for part in name.split(separator: ",") {
                guard let day = ScheduleWeekday(rawValue: Self.trimmed(part)) else {
                    throw CloudBodyError(field: "repeat", "must be none, day, or days of the week such as mon,wed (not \(part))")
                }
                days.insert(day)
            }
            guard !days.isEmpty else { throw CloudBodyError(field: "repeat", "names no day of the week") }
            return .weekly(days)
        }
    }

    private static func trimmed(_ text: some StringProtocol) -> String {
        String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }

    public var json: JSONValue { .object(object) }

    var object: JSONObject {
        let recurrence = recurrence
        var object: JSONObject = [
            "time": .string(recurrence.time.description), "repeat": .string(recurrence.repetition.wireName), "enabled": .bool(enabled),
            "remark": .string(remark), "tz": .string(recurrence.zone.identifier), "queue_ttl": .int(queueSeconds),
            "start_date": .string(recurrence.startDate?.description ?? ""), "end_date": .string(recurrence.endDate?.description ?? ""),
        ]
        switch recurrence.repetition {
        case .once(let date): object["date"] = .string(date.description)
        case .monthly(let days): object["days"] = .array(days.sorted().map { .string(String($0)) })
        case .weekly: break
        }
        switch target {
        case .device(let did): object["did"] = .string(did)
        case .group(let id): object["group_id"] = .string(id)
        case .scene(let id): object["scene_id"] = .string(id)
        }
        switch command {
        case .attrs(let attrs)?: object["attrs"] = .object(attrs)
        case .raw(let bytes, let base64)?:
            object["raw"] = .string(base64 ? bytes.tetherBase64 : bytes.tetherHex)
            object["binary_coding"] = .string(base64 ? "base64" : "hex")
        case nil: break
        }
        return object
    }
}

/// A schedule as the cloud answers it: the fields, with `id`, `product_key`, `created_at` and
/// (Tether) `updated_at` and `next_run` (Unix seconds of the next run; absent when disabled or
/// when no run is left).
public struct ScheduleBody: Sendable, Hashable {
    public var id: String
    public var fields: ScheduleFieldsBody
    public var productKey: String
    public var createdAt: Int64
    public var updatedAt: Int64
    public var nextRun: Int64?

    public init(id: String, fields: ScheduleFieldsBody, productKey: String, createdAt: Int64, updatedAt: Int64, nextRun: Int64?) {
        self.id = id
        self.fields = fields
        self.productKey = productKey
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.nextRun = nextRun
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.text("id"), fields: try ScheduleFieldsBody(json: json), productKey: try reader.optionalString("product_key") ?? "",
            createdAt: try reader.optionalInt("created_at") ?? 0, updatedAt: try reader.optionalInt("updated_at") ?? 0,
            nextRun: try reader.optionalInt("next_run"))
    }

    public var json: JSONValue {
        var object = fields.object
        object["id"] = .string(id)
        object["product_key"] = .string(productKey)
        object["created_at"] = .int(createdAt)
        object["updated_at"] = .int(updatedAt)
        object["next_run"] = nextRun.map(JSONValue.int) ?? .null
        return .object(object)
    }
}

/// One run of a schedule (Tether: `GET …/scheduler/{id}/logs`): when it was due, when it fired,
/// the command it put in the ledger, and its state: `missed` (the cloud was down past the grace
/// period), `refused` (it could not be sent: ``errorCode`` says why — not bound, offline,
/// disabled, a data point the model no longer has), or the ledger's state of its command
/// (`accepted` … `applied`, `expired`, `rejected`).
public struct ScheduleRunBody: Sendable, Hashable {
    public var id: Int64
    public var scheduleID: String
    /// Unix milliseconds the run was due.
    public var plannedAt: Int64
    /// Unix milliseconds it fired; nil when missed.
    public var firedAt: Int64?
    public var commandID: Int64?
    /// A group's or a scene's run (Tether): its steps are the scene's status.
    public var runID: String?
    public var state: String
    public var errorCode: Int?
    public var message: String

    public init(
        id: Int64, scheduleID: String, plannedAt: Int64, firedAt: Int64?, commandID: Int64?, runID: String? = nil, state: String, errorCode: Int? = nil,
        message: String = ""
    ) {
        self.id = id
        self.scheduleID = scheduleID
        self.plannedAt = plannedAt
        self.firedAt = firedAt
        self.commandID = commandID
        self.runID = runID
        self.state = state
        self.errorCode = errorCode
        self.message = message
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.int("id"), scheduleID: try reader.text("schedule_id"), plannedAt: try reader.int("planned_at"),
            firedAt: try reader.optionalInt("fired_at"), commandID: try reader.optionalInt("command_id"), runID: try reader.optionalString("run_id"),
            state: try reader.text("state"),
            errorCode: try reader.optionalInt("error_code").map { Int(clamping: $0) }, message: try reader.optionalString("message") ?? "")
    }

    public var json: JSONValue {
        [
            "id": .int(id), "schedule_id": .string(scheduleID), "planned_at": .int(plannedAt), "fired_at": firedAt.map(JSONValue.int) ?? .null,
            "command_id": commandID.map(JSONValue.int) ?? .null, "run_id": runID.map(JSONValue.string) ?? .null, "state": .string(state),
            "error_code": errorCode.map { .int(Int64($0)) } ?? .null, "message": .string(message),
        ]
    }
}

/// `s2c_schedules` (Tether; the Gizwits SDK's `didUpdateSchedulers`): one of the user's schedules
/// was created, changed or deleted by any of the user's sessions.
public struct ScheduleChangeBody: Sendable, Hashable {
    public enum Change: String, Sendable, Hashable, CaseIterable {
        case created, updated, deleted
    }

    public var id: String
    public var change: Change
    /// The schedule's device, for a device's schedule.
    public var did: String?

    public init(id: String, change: Change, did: String?) {
        self.id = id
        self.change = change
        self.did = did
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let name = try reader.text("change")
        guard let change = Change(rawValue: name) else { throw CloudBodyError(field: "change", "must be created, updated or deleted") }
        self.init(id: try reader.text("id"), change: change, did: try reader.optionalString("did"))
    }

    public var json: JSONValue {
        var object: JSONObject = ["id": .string(id), "change": .string(change.rawValue)]
        if let did { object["did"] = .string(did) }
        return .object(object)
    }
}

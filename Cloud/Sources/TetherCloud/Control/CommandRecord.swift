public import TetherCloudProtocol
public import TetherCore

/// Where a command is in its life. `accepted` → `sent` → `acknowledged` (the device's
/// `set_reply` said 200) → `applied` (a report shows every written value); or `queued` (the
/// device was offline and the caller asked to wait) → `sent` when it returns; or `rejected`
/// (the device answered with an error code), `expired` (no answer in time, or the queue's
/// time-to-live passed), `failed` (it could not be sent).
public enum CommandState: String, Codable, Sendable, Hashable, CaseIterable {
    case accepted, queued, sent, acknowledged, applied, rejected, expired, failed

    /// No further change will happen.
    public var isFinal: Bool {
        switch self {
        case .applied, .rejected, .expired, .failed: return true
        case .accepted, .queued, .sent, .acknowledged: return false
        }
    }
}

/// What a command asks of the device.
public enum CommandKind: String, Codable, Sendable {
    /// Data point values (Alink `thing.service.property.set`).
    case attrs
    /// Transparent bytes (`thing/model/down_raw`).
    case raw
    /// A service call (`thing.service.{identifier}`).
    case service
    /// A firmware upgrade offered (`/ota/device/upgrade`): sent when offered, acknowledged
    /// while the device reports progress, applied when it reports the new version.
    case ota
}

/// Who sent a command: an app, or the cloud on a user's behalf.
public enum CommandSource: String, Codable, Sendable {
    case app
    /// A schedule's run (of a device, a group or a scene).
    case scheduler
    /// A scene an app ran.
    case scene
    /// A linkage rule a device's event set off.
    case rule
}

/// One command of the ledger.
public struct CommandRecord: Sendable, Equatable {
    public var id: Int64
    public var did: String
    public var uid: String
    public var appID: String
    public var kind: CommandKind
    /// For `attrs`: the values, by name; for `raw`: `{"raw": "hex"}`; for `service`:
    /// `{"identifier", "params"}`, and `{"identifier", "params", "output"}` once answered; for
    /// `ota`: `{"firmware_id", "version", "module"}`, with `step` and `desc` once the device reports.
    public var body: JSONValue
    public var state: CommandState
    public var code: Int?
    public var message: String
    public var createdMs: Int64
    public var updatedMs: Int64
    public var sentMs: Int64?
    public var queueUntilMs: Int64?
    public var source: CommandSource

    static let columns = "id, did, uid, app_id, kind, body, state, code, message, created_ms, updated_ms, sent_ms, queue_until_ms, source"

    init(row: SQLRow) throws(StorageError) {
        id = try row.int("id")
        did = try row.text("did")
        uid = try row.text("uid")
        appID = try row.text("app_id")
        kind = CommandKind(rawValue: try row.text("kind")) ?? .attrs
        body = (try? JSONValue.parse(try row.text("body"))) ?? .object([:])
        state = CommandState(rawValue: try row.text("state")) ?? .failed
        code = row.optionalInt("code").map { Int($0) }
        message = try row.text("message")
        createdMs = try row.int("created_ms")
        updatedMs = try row.int("updated_ms")
        sentMs = row.optionalInt("sent_ms")
        queueUntilMs = row.optionalInt("queue_until_ms")
        source = CommandSource(rawValue: try row.text("source")) ?? .app
    }

    /// The Alink request id the command travels with: its ledger id, as the decimal string
    /// Alink wants.
    public var alinkID: String { String(id) }

    /// The written values, for `attrs` commands.
    public var attrs: JSONObject { body.objectValue ?? [:] }

    /// The ledger entry as the API shows it.
    /// As `GET /app/commands/{id}` answers it.
    public var json: JSONValue {
        var answer = CommandBody(
            id: id, did: did, kind: CommandBody.Kind(rawValue: kind.rawValue) ?? .attrs, state: state.rawValue, code: code, message: message,
            createdAt: createdMs, updatedAt: updatedMs, sentAt: sentMs, queueUntil: queueUntilMs, source: source.rawValue
        )
        switch kind {
        case .attrs: answer.attrs = body
        case .raw: answer.raw = body["raw"]?.stringValue ?? ""
        case .service:
            answer.service = body["identifier"]?.stringValue ?? ""
            answer.params = body["params"] ?? .object([:])
            answer.output = body["output"]
        case .ota:
            answer.upgrade = upgrade
        }
        return answer.json
    }

    /// For `ota` commands: the upgrade as apps see it.
    public var upgrade: FirmwareUpgradeBody? {
        guard kind == .ota, case .int(let firmwareID)? = body["firmware_id"] else { return nil }
        let step: Int? = if case .int(let number)? = body["step"] { Int(exactly: number) } else { nil }
        return FirmwareUpgradeBody(
            commandID: id, did: did, state: state.rawValue, firmwareID: firmwareID, version: body["version"]?.stringValue ?? "",
            module: body["module"]?.stringValue ?? "default", step: step, desc: body["desc"]?.stringValue ?? "", updatedAt: updatedMs)
    }

    public var update: CommandUpdate { CommandUpdate(id: id, did: did, state: state, code: code, message: message) }
}

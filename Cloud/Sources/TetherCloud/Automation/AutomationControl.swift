import TetherCloudProtocol
import TetherCore

/// A write an automation (a schedule's run, a scene's step) makes for its user, on the
/// automation's transaction: the checks an app's write gets (the user's account, the binding, the
/// device, the product's model), then the ledger entry. Delivery is the caller's, after commit.
struct AutomationControl: Sendable {
    let database: any SQLDatabase
    let catalogue: DeviceCatalogue

    enum Outcome: Sendable {
        case sent(CommandRecord)
        case refused(CloudAPIError)
    }

    /// What is written: an app's form (a schedule's) or a scene task's.
    enum Command: Sendable {
        case control(ControlService.Request)
        case scene(SceneCommand)
    }

    /// `queueMs` > 0 lets the command wait that long for an offline device.
    func send(
        uid: String, appID: String, did: String, _ command: Command, queueMs: Int64, source: CommandSource, on transaction: any SQLExecutor
    ) async throws -> Outcome {
        guard try await !UserStore(transaction).isDisabled(uid: uid) else {
            return .refused(CloudAPIError.userInvalid(detail: "the automation's user is disabled"))
        }
        guard let device = try await BindingStore(transaction).device(boundBy: uid, did: did) else {
            return .refused(CloudAPIError.deviceNotBound(detail: "the automation's user is not bound to \(did)"))
        }
        guard !device.isDisabled else { return .refused(CloudAPIError.deviceDisabled()) }
        let model: ThingModel
        do {
            model = try await catalogue.model(device.productKey, on: transaction)
        } catch {
            return .refused(CloudAPIError.serverError(detail: "the product's model could not be read"))
        }
        let kind: CommandKind
        let body: JSONValue
        do {
            (kind, body) = try ControlService.command(try Self.request(command, model: model), model: model)
        } catch let error as CloudAPIError {
            return .refused(error)
        }
        guard device.isOnline || queueMs > 0 else { return .refused(CloudAPIError.deviceOffline(detail: "device \(did) was offline")) }
        // The ledger's deadlines are on the system's clock, whatever an automation's clock reads.
        let record = try await CommandLedger(database: database).insert(
            did: did, uid: uid, appID: appID, kind: kind, body: body, state: queueMs > 0 ? .queued : .accepted,
            queueUntilMs: queueMs > 0 ? Clock.unixMilliseconds() + queueMs : nil, source: source, on: transaction)
        return .sent(record)
    }

    /// A scene's values as a control's: enums by index pass as they are, binary data points'
    /// Base64 becomes bytes.
    static func request(_ command: Command, model: ThingModel) throws -> ControlService.Request {
        switch command {
        case .control(let request):
            return request
        case .scene(.raw(let bytes, _)):
            return .raw(bytes)
        case .scene(.attrs(let attrs)):
            var values = JSONObject()
            for name in attrs.keys {
                let value = attrs[name]!
                if case .binary? = model.dataPoint(named: name)?.type, case .string(let text) = value {
                    guard let bytes = [UInt8](tetherBase64: text) else {
                        throw CloudAPIError.attrInvalid(detail: "\"\(name)\" is binary: a scene writes it as Base64")
                    }
                    values[name] = .array(bytes.map { .int(Int64($0)) })
                } else {
                    values[name] = value
                }
            }
            return .attrs(values)
        }
    }

    /// A schedule's command as a scene step's (a group's schedule runs as one): binary data
    /// points written as hex become bytes, which both read alike.
    static func sceneCommand(_ command: ScheduleCommand, model: ThingModel?) -> SceneCommand {
        switch command {
        case .raw(let bytes, let base64):
            return .raw(bytes, base64: base64)
        case .attrs(let attrs):
            var values = JSONObject()
            for name in attrs.keys {
                let value = attrs[name]!
                if case .binary? = model?.dataPoint(named: name)?.type, case .string(let text) = value, let bytes = [UInt8](tetherHex: text) {
                    values[name] = .array(bytes.map { .int(Int64($0)) })
                } else {
                    values[name] = value
                }
            }
            return .attrs(values)
        }
    }
}

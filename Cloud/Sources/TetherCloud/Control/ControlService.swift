import TetherAlink
import TetherCore

/// Controls from apps, over REST or the WebSocket: checked against the binding and the
/// product's model, recorded in the command ledger, and handed to whichever node holds the
/// device. A device that is offline fails the control at once, unless the caller asked for it
/// to be queued for a while.
public struct ControlService: Sendable {
    let database: any SQLDatabase
    let bus: any ClusterBus
    let ledger: CommandLedger
    let catalogue: DeviceCatalogue
    let maximumQueueSeconds: Int64
    let metrics: CloudMetrics

    init(database: any SQLDatabase, bus: any ClusterBus, catalogue: DeviceCatalogue, maximumQueueSeconds: Int64, metrics: CloudMetrics) {
        self.database = database
        self.bus = bus
        self.ledger = CommandLedger(database: database)
        self.catalogue = catalogue
        self.maximumQueueSeconds = maximumQueueSeconds
        self.metrics = metrics
    }

    /// What an app asks of a device.
    enum Request: Sendable {
        case attrs(JSONObject)
        case raw([UInt8])
        case service(identifier: String, params: JSONValue)
    }

    /// Records and dispatches a control. `queueSeconds` > 0 keeps it for an offline device
    /// that long. `recorded` sees the ledger entry before anything can happen to it.
    @discardableResult
    func control(
        _ user: AuthenticatedUser, did: String, _ request: Request, queueSeconds: Int64? = nil, recorded: (CommandRecord) -> Void = { _ in }
    ) async throws -> CommandRecord {
        let device = try await DeviceAccess(database: database).controllable(by: user, did: did)
        let (kind, body) = try Self.command(request, model: try await catalogue.model(device.productKey))
        var queueUntil: Int64?
        if let queueSeconds, queueSeconds != 0 {
            guard (1...maximumQueueSeconds).contains(queueSeconds) else {
                throw CloudAPIError.formInvalid(detail: "queue_ttl is 1 to \(maximumQueueSeconds) seconds")
            }
            queueUntil = Clock.unixMilliseconds() + queueSeconds * 1000
        }
        guard device.isOnline || queueUntil != nil else {
            throw CloudAPIError.deviceOffline(detail: "device \(did) is offline; send queue_ttl to have the command wait for it")
        }
        // A command that may wait is queued: whichever node holds the device sends it now, or
        // when it connects. Delivery is always asked for, so a device that connects between
        // the check above and this insert still gets it.
        let record = try await ledger.insert(
            did: did, uid: user.uid, appID: user.appID, kind: kind, body: body,
            state: queueUntil == nil ? .accepted : .queued, queueUntilMs: queueUntil
        )
        metrics.commandAccepted()
        recorded(record)
        await bus.publish(.command(record.update))
        await bus.publish(.deliver(commandID: record.id, did: did))
        return record
    }

    /// What the device is sent for `request`, checked against its product's model: the one
    /// check of a command, whoever sends it (an app, a schedule).
    static func command(_ request: Request, model: ThingModel) throws -> (CommandKind, JSONValue) {
        let kind: CommandKind
        let body: JSONValue
        switch request {
        case .attrs(let attrs):
            do {
                body = .object(model.appJSON(try model.appWrite(attrs)))
            } catch {
                throw CloudAPIError.attrInvalid(detail: Self.naming(error))
            }
            kind = .attrs
        case .raw(let bytes):
            guard (1...65_536).contains(bytes.count) else { throw CloudAPIError.formInvalid(detail: "raw holds 1 to 65536 bytes") }
            kind = .raw
            body = ["raw": .string(bytes.tetherHex)]
        case .service(let identifier, let params):
            guard let service = model.services.first(where: { $0.identifier == identifier && $0.identifier != "set" && $0.identifier != "get" }) else {
                throw CloudAPIError.attrInvalid(detail: "product \(model.productKey) has no service \(identifier)")
            }
            guard let object = params.objectValue else { throw CloudAPIError.formInvalid(detail: "params must be an object") }
            var values: [String: DataValue] = [:]
            for name in object.keys {
                let json = object[name]!
                guard let value = DataValue(json: json) else {
                    throw CloudAPIError.attrInvalid(detail: "\"\(name)\" cannot be \(json.serialized())")
                }
                values[name] = value
            }
            do {
                // Sent to the device as the TSL writes values (bools as 0/1).
                body = ["identifier": .string(identifier), "params": model.alinkParams(try service.validateCall(values))]
            } catch {
                throw CloudAPIError.attrInvalid(detail: Self.naming(error))
            }
            kind = .service
        }
        return (kind, body)
    }

    /// A ledger entry, for the user who sent it or any user bound to its device.
    func command(_ user: AuthenticatedUser, id: Int64) async throws -> CommandRecord {
        guard let record = try await ledger.find(id), try await isBound(user, did: record.did) else {
            throw CloudAPIError.notFound(detail: "no command \(id) of a device you are bound to")
        }
        return record
    }

    func commands(_ user: AuthenticatedUser, did: String, limit: Int, skip: Int) async throws -> [CommandRecord] {
        guard try await isBound(user, did: did) else { throw CloudAPIError.deviceNotBound() }
        return try await ledger.list(did: did, limit: limit, skip: skip)
    }

    func isBound(_ user: AuthenticatedUser, did: String) async throws -> Bool {
        try await BindingStore(database).isBound(user.uid, did: did)
    }

    /// A model check's message, led by the data point or parameter it is about when the
    /// message does not name it already ("Brightness: 120 is outside 0…100").
    static func naming(_ error: TetherError) -> String {
        guard let name = error.dataPoint, !error.message.contains("\"\(name)\"") else { return error.message }
        return "\(name): \(error.message)"
    }
}

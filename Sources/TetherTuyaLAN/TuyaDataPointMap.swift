public import TetherCore

/// A product model's data points as Tuya sees them: by DP id (the model's data-point `id`), values
/// as JSON (bytes as Base64, as Tuya's raw points travel). Apps write `["switch": true]`; the
/// device hears `{"1": true}`.
public struct TuyaDataPointMap: Sendable {
    public let model: ThingModel

    public init(model: ThingModel) { self.model = model }

    /// Named values → `dps` (names the model does not have are left out).
    public func dps(_ values: [String: DataValue]) -> JSONObject {
        var dps = JSONObject()
        for point in model.dataPoints.sorted(by: { $0.id < $1.id }) {
            guard let value = values[point.name] else { continue }
            dps[String(point.id)] = Self.json(value)
        }
        return dps
    }

    /// Every DP id of the model, for a device22's explicit status read.
    public var ids: [String] { model.dataPoints.sorted(by: { $0.id < $1.id }).map { String($0.id) } }

    /// A value as Tuya carries it.
    public static func json(_ value: DataValue) -> JSONValue {
        if case .binary(let bytes) = value { return .string(bytes.tetherBase64) }
        return value.jsonValue
    }

    /// `{"1": true}` → `["switch": .bool(true)]`; unknown ids and unreadable values are left out.
    public func values(_ dps: JSONObject) -> [String: DataValue] {
        var values: [String: DataValue] = [:]
        for id in dps.keys {
            guard let number = Int(id), let point = model.dataPoints.first(where: { $0.id == number }), let json = dps[id] else { continue }
            if case .binary = point.type, case .string(let text) = json, let bytes = [UInt8](tetherBase64: text) {
                values[point.name] = .binary(bytes)
            } else if let value = DataValue(json: json) {
                values[point.name] = value
            }
        }
        return values
    }

    /// `{"1": true}` → `{"switch": true}`, for display; ids the model does not have stay as they are.
    public func named(_ dps: JSONObject) -> JSONObject {
        var named = JSONObject()
        for id in dps.keys {
            let point = Int(id).flatMap { number in model.dataPoints.first { $0.id == number } }
            named[point?.name ?? id] = dps[id] ?? .null
        }
        return named
    }
}

public import TetherCore

/// The outcome of checking a device's property post against its product's model.
public struct AlinkPropertyCheck: Sendable {
    /// Values that fit the model, normalized.
    public var accepted: [String: DataValue] = [:]
    /// Properties that were refused, with the reason.
    public var rejected: [(name: String, error: TetherError)] = []

    /// An empty check: nothing accepted, nothing rejected.
    public init() {}
}

extension ThingModel {
    /// Checks `params` of a `thing.event.property.post` (or a `property.set`): each property
    /// must exist and its value fit. Values may be bare or `{"value": v, "time": ms}`.
    public func checkAlinkProperties(_ params: JSONValue) -> AlinkPropertyCheck {
        var check = AlinkPropertyCheck()
        guard let object = params.objectValue else {
            check.rejected.append(("params", TetherError(.malformedPayload, "params must be an object of property values")))
            return check
        }
        for name in object.keys {
            var json = object[name]!
            if let wrapped = json["value"] { json = wrapped }
            guard let point = dataPoint(named: name) else {
                check.rejected.append((name, TetherError(.unknownDataPoint, "product \(productKey) has no property \"\(name)\"", dataPoint: name)))
                continue
            }
            guard let value = Self.dataValue(json, for: point) else {
                check.rejected.append((name, TetherError(.wrongValueType, "\"\(name)\" cannot be \(json.serialized())", dataPoint: name)))
                continue
            }
            do {
                check.accepted[name] = try point.normalize(value)
            } catch {
                check.rejected.append((name, error))
            }
        }
        return check
    }

    /// Values as Alink params: bools as 0/1 and enums as their index, as the TSL writes them.
    public func alinkParams(_ values: [String: DataValue]) -> JSONValue {
        var object = JSONObject()
        for name in values.keys.sorted() {
            switch values[name]! {
            case .bool(let flag): object[name] = .int(flag ? 1 : 0)
            case let other: object[name] = other.jsonValue
            }
        }
        return .object(object)
    }

    /// A JSON value as a data value; a binary point also takes an array of bytes.
    static func dataValue(_ json: JSONValue, for point: DataPoint) -> DataValue? {
        if case .binary = point.type, case .array(let items) = json {
            var bytes: [UInt8] = []
            for item in items {
                guard case .int(let number) = item, let byte = UInt8(exactly: number) else { return nil }
                bytes.append(byte)
            }
            return .binary(bytes)
        }
        return DataValue(json: json)
    }
}

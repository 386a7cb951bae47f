import TetherCore

extension ThingModel {
    /// Values as apps see them in `s2c_noti`, `/app/devdata/…/latest` and the ledger: bools as
    /// true/false, enums as their label, numbers as numbers, binary as lowercase hex.
    func appJSON(_ values: [String: DataValue]) -> JSONObject {
        var object = JSONObject()
        for name in values.keys.sorted() {
            let value = values[name]!
            if case .enumeration(let labels)? = dataPoint(named: name)?.type, case .int(let index) = value, labels.indices.contains(Int(index)) {
                object[name] = .string(labels[Int(index)])
            } else {
                object[name] = value.jsonValue
            }
        }
        return object
    }

    /// Reads app-supplied values (`attrs` of `/app/control` and `c2s_write`) and validates
    /// them as a write: every name writable, every value in range. Binary also takes a byte
    /// array.
    func appWrite(_ attrs: JSONObject) throws(TetherError) -> [String: DataValue] {
        var values: [String: DataValue] = [:]
        for name in attrs.keys {
            let json = attrs[name]!
            guard let point = dataPoint(named: name) else {
                throw TetherError(.unknownDataPoint, "product \(productKey) has no data point named \"\(name)\"", dataPoint: name)
            }
            if case .binary = point.type, case .array(let items) = json {
                var bytes: [UInt8] = []
                for item in items {
                    guard case .int(let number) = item, let byte = UInt8(exactly: number) else {
                        throw TetherError(.wrongValueType, "a byte array holds integers 0…255", dataPoint: name)
                    }
                    bytes.append(byte)
                }
                values[name] = .binary(bytes)
            } else if let value = DataValue(json: json) {
                values[name] = value
            } else {
                throw TetherError(.wrongValueType, "\"\(name)\" cannot be \(json.serialized())", dataPoint: name)
            }
        }
        return try validateWrite(values)
    }
}

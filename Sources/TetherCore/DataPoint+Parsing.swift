extension DataPoint {
    /// Reads a value typed by a person (`true`, `on`, `Purple`, `2`, `21.5`, `0a0b`) as this data
    /// point's type, then checks it like ``normalize(_:)``.
    public func parse(_ text: String) throws(TetherError) -> DataValue {
        switch type {
        case .bool:
            switch text.lowercased() {
            case "true", "1", "on", "yes": return .bool(true)
            case "false", "0", "off", "no": return .bool(false)
            default: throw TetherError(.wrongValueType, "\"\(text)\" is not a bool (true/false, on/off, 1/0)", dataPoint: name)
            }
        case .enumeration:
            if let index = Int64(text) { return try normalize(.int(index)) }
            return try normalize(.string(text))
        case .number:
            if let integer = Int64(text) { return try normalize(.int(integer)) }
            guard let number = Double(text), number.isFinite else {
                throw TetherError(.wrongValueType, "\"\(text)\" is not a number", dataPoint: name)
            }
            return try normalize(.double(number))
        case .text:
            return try normalize(.string(text))
        case .binary:
            guard let bytes = [UInt8](tetherHex: text) else {
                throw TetherError(.wrongValueType, "\"\(text)\" is not hexadecimal bytes", dataPoint: name)
            }
            return try normalize(.binary(bytes))
        }
    }
}

extension ThingModel {
    /// Reads `NAME=VALUE` assignments (command-line style) into values for a write.
    public func parseAssignments(_ assignments: [String]) throws(TetherError) -> [String: DataValue] {
        var values: [String: DataValue] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw TetherError(.invalidArgument, "\"\(assignment)\" is not NAME=VALUE")
            }
            let name = String(assignment[..<equals])
            guard let point = dataPoint(named: name) else {
                throw TetherError(.unknownDataPoint, "product \(productKey) has no data point named \"\(name)\"", dataPoint: name)
            }
            values[name] = try point.parse(String(assignment[assignment.index(after: equals)...]))
        }
        return values
    }
}

extension ThingModel {
    /// Checks a value for a data point and returns it in canonical form, or throws an error that
    /// names the data point and the rule broken.
    ///
    /// Lenient where clients commonly are: a bool accepts 0/1, an enum accepts its label or its
    /// index, a number accepts an integer or a double, binary accepts hex text.
    public func normalize(_ value: DataValue, for name: String) throws(TetherError) -> DataValue {
        guard let point = dataPoint(named: name) else {
            throw TetherError(.unknownDataPoint, "product \(productKey) has no data point named \"\(name)\"", dataPoint: name)
        }
        return try point.normalize(value)
    }

    /// Validates a write: every name must exist and be writable, every value must fit.
    /// Returns the normalized values.
    public func validateWrite(_ values: [String: DataValue]) throws(TetherError) -> [String: DataValue] {
        guard !values.isEmpty else {
            throw TetherError(.invalidArgument, "a write needs at least one data point")
        }
        var normalized: [String: DataValue] = [:]
        for name in values.keys.sorted() {
            guard let point = dataPoint(named: name) else {
                throw TetherError(.unknownDataPoint, "product \(productKey) has no data point named \"\(name)\"", dataPoint: name)
            }
            guard point.kind == .writable else {
                throw TetherError(.readOnlyDataPoint, "\"\(name)\" is \(point.kind.rawValue) and cannot be written", dataPoint: name)
            }
            normalized[name] = try point.normalize(values[name]!)
        }
        return normalized
    }
}

extension DataPoint {
    /// Checks a value against this data point's type and range and returns its canonical form.
    public func normalize(_ value: DataValue) throws(TetherError) -> DataValue {
        switch type {
        case .bool:
            switch value {
            case .bool: return value
            case .int(0): return .bool(false)
            case .int(1): return .bool(true)
            case .int(let other):
                throw TetherError(.valueOutOfRange, "\(other) is not a bool (expected true/false or 0/1)", dataPoint: name)
            default:
                throw wrongType(value, expected: "bool")
            }
        case .enumeration(let labels):
            switch value {
            case .int(let index):
                guard index >= 0, index < labels.count else {
                    throw TetherError(.valueOutOfRange, "enum index \(index) is outside 0…\(labels.count - 1)", dataPoint: name)
                }
                return value
            case .string(let label):
                guard let index = labels.firstIndex(of: label) else {
                    throw TetherError(.valueOutOfRange, "\"\(label)\" is not one of \(labels.map { "\"\($0)\"" }.joined(separator: ", "))", dataPoint: name)
                }
                return .int(Int64(index))
            case .double(let number) where number.isIntegral:
                guard let index = Int64(exactly: number) else {
                    throw TetherError(.valueOutOfRange, "enum index \(number) is outside 0…\(labels.count - 1)", dataPoint: name)
                }
                return try normalize(.int(index))
            default:
                throw wrongType(value, expected: "enum label or index")
            }
        case .number(let spec):
            let shown: Double
            switch value {
            case .int(let number): shown = Double(number)
            case .double(let number) where number.isFinite: shown = number
            default: throw wrongType(value, expected: "number")
            }
            let raw = try spec.raw(for: shown, dataPoint: name)
            return spec.value(raw: raw)
        case .text(let maxLength):
            guard case .string(let text) = value else { throw wrongType(value, expected: "text") }
            guard text.utf8.count <= maxLength else {
                throw TetherError(.valueOutOfRange, "text of \(text.utf8.count) bytes is longer than \(maxLength)", dataPoint: name)
            }
            return value
        case .binary(let length):
            let bytes: [UInt8]
            switch value {
            case .binary(let data): bytes = data
            case .string(let text):
                guard let data = [UInt8](tetherHex: text) else { throw wrongType(value, expected: "binary (hex text)") }
                bytes = data
            default: throw wrongType(value, expected: "binary")
            }
            guard bytes.count <= length else {
                throw TetherError(.valueOutOfRange, "\(bytes.count) bytes is longer than \(length)", dataPoint: name)
            }
            return .binary(bytes)
        }
    }

    private func wrongType(_ value: DataValue, expected: String) -> TetherError {
        TetherError(.wrongValueType, "expected \(expected), got \(value.typeName) \(value)", dataPoint: name)
    }
}

extension NumberSpec {
    /// The raw wire value for a shown value, or the range/step error naming `dataPoint`.
    public func raw(for shown: Double, dataPoint: String) throws(TetherError) -> UInt32 {
        let exact = (shown - addition) / ratio
        let nearest = exact.rounded()
        // Tolerate binary floating-point noise (0.3 / 0.1 = 2.9999999999999996), and no more: a
        // relative tolerance must stay far below half a step even for 32-bit raw values.
        guard abs(exact - nearest) <= 1e-9 + abs(exact) * 1e-12 else {
            throw TetherError(
                .notMultipleOfStep,
                "\(Self.format(shown)) is not \(Self.format(addition)) plus a multiple of the step \(Self.format(ratio))",
                dataPoint: dataPoint
            )
        }
        guard nearest >= Double(rawMin), nearest <= Double(rawMax) else {
            throw TetherError(
                .valueOutOfRange,
                "\(Self.format(shown)) is outside \(Self.format(minimum))…\(Self.format(maximum))",
                dataPoint: dataPoint
            )
        }
        return UInt32(nearest)
    }

    static func format(_ value: Double) -> String {
        value.isIntegral && abs(value) < 9e15 ? String(Int64(value)) : String(value)
    }
}

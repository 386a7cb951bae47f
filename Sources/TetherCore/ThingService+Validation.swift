extension ThingService {
    /// Checks the parameters of a call against the service's inputs and returns them
    /// normalized, or an error naming the parameter and the rule it breaks: every parameter must
    /// be an input, every input must be given, and every value must fit the input's type (as a
    /// data point's value must; an input the model only names takes any value).
    public func validateCall(_ params: [String: DataValue]) throws(TetherError) -> [String: DataValue] {
        var normalized: [String: DataValue] = [:]
        for name in params.keys.sorted() {
            guard let input = inputData.first(where: { $0.identifier == name }) else {
                throw TetherError(.unknownDataPoint, "service \(identifier) has no input \"\(name)\"", dataPoint: name)
            }
            guard let type = input.type else {
                normalized[name] = params[name]!
                continue
            }
            let point = DataPoint(name: name, kind: .writable, type: type, id: 0)
            normalized[name] = try point.normalize(params[name]!)
        }
        if let missing = inputData.first(where: { params[$0.identifier] == nil }) {
            throw TetherError(.invalidArgument, "service \(identifier) needs its input \"\(missing.identifier)\"", dataPoint: missing.identifier)
        }
        return normalized
    }
}

/// A device's status as the SDK reports it: data, alerts and faults, by data-point name.
///
/// `data` holds the writable and read-only points, `alerts` and `faults` the points of those
/// kinds. A report may be partial (variable-length P0, a cloud property post): only the points
/// it carries are present.
public struct DeviceStatus: Hashable, Sendable {
    /// Values of writable and read-only data points, by name.
    public var data: [String: DataValue]
    /// Values of alert data points, by name.
    public var alerts: [String: DataValue]
    /// Values of fault data points, by name.
    public var faults: [String: DataValue]

    /// A status from values already sorted by kind; names are not checked against a model.
    public init(data: [String: DataValue] = [:], alerts: [String: DataValue] = [:], faults: [String: DataValue] = [:]) {
        self.data = data
        self.alerts = alerts
        self.faults = faults
    }

    /// Sorts values into data, alerts and faults by their data points' kinds. Names the model
    /// does not know are dropped.
    public init(values: [String: DataValue], model: ThingModel) {
        self.init()
        for (name, value) in values {
            guard let point = model.dataPoint(named: name) else { continue }
            self[point.kind, name] = value
        }
    }

    /// Whether the status carries no value of any kind.
    public var isEmpty: Bool { data.isEmpty && alerts.isEmpty && faults.isEmpty }

    /// All values, whatever their kind.
    public var allValues: [String: DataValue] {
        data.merging(alerts) { first, _ in first }.merging(faults) { first, _ in first }
    }

    /// The value of `name` in the dictionary `kind` selects (writable and read-only share ``data``);
    /// setting nil removes it.
    public subscript(kind: DataPoint.Kind, name: String) -> DataValue? {
        get {
            switch kind {
            case .writable, .readOnly: return data[name]
            case .alert: return alerts[name]
            case .fault: return faults[name]
            }
        }
        set {
            switch kind {
            case .writable, .readOnly: data[name] = newValue
            case .alert: alerts[name] = newValue
            case .fault: faults[name] = newValue
            }
        }
    }

    /// Values of `other` replace these; values only here stay.
    public mutating func merge(_ other: DeviceStatus) {
        data.merge(other.data) { _, new in new }
        alerts.merge(other.alerts) { _, new in new }
        faults.merge(other.faults) { _, new in new }
    }

    /// `{"data": {…}, "alerts": {…}, "faults": {…}}` with keys sorted.
    public var jsonValue: JSONValue {
        .object(["data": Self.json(data), "alerts": Self.json(alerts), "faults": Self.json(faults)])
    }

    static func json(_ values: [String: DataValue]) -> JSONValue {
        var object = JSONObject()
        for key in values.keys.sorted() { object[key] = values[key]!.jsonValue }
        return .object(object)
    }
}

import Tether

/// A 10-data-point product (a thermostat) shaped like typical Gizwits products: writable
/// switches, enums and scaled numbers, read-only sensors, alerts and faults.
enum BenchmarkProducts {
    static let thermostat = ThingModel(
        productKey: "bench-thermostat-0000000000000000",
        name: "Benchmark thermostat",
        dataPoints: [
            DataPoint(name: "Power", kind: .writable, type: .bool, id: 0),
            DataPoint(name: "Mode", kind: .writable, type: .enumeration(["auto", "cool", "heat", "dry", "fan"]), id: 1),
            DataPoint(name: "FanSpeed", kind: .writable, type: .enumeration(["low", "mid", "high"]), id: 2),
            DataPoint(name: "TargetTemperature", kind: .writable, type: .number(NumberSpec(rawMax: 600, ratio: 0.1, addition: 0)), id: 3),
            DataPoint(name: "Temperature", kind: .readOnly, type: .number(NumberSpec(rawMax: 1000, ratio: 0.1, addition: -40)), id: 4),
            DataPoint(name: "Humidity", kind: .readOnly, type: .number(NumberSpec(rawMax: 100)), id: 5),
            DataPoint(name: "EnergyToday", kind: .readOnly, type: .number(NumberSpec(rawMax: 4_000_000_000, ratio: 0.001)), id: 6),
            DataPoint(name: "FilterDirty", kind: .alert, type: .bool, id: 7),
            DataPoint(name: "SensorFault", kind: .fault, type: .bool, id: 8),
            DataPoint(name: "MotorFault", kind: .fault, type: .bool, id: 9),
        ]
    )

    static let thermostatState: [String: DataValue] = [
        "Power": .bool(true), "Mode": .int(2), "FanSpeed": .int(1), "TargetTemperature": .double(21.5),
        "Temperature": .double(19.8), "Humidity": .int(45), "EnergyToday": .double(1234.567),
        "FilterDirty": .bool(false), "SensorFault": .bool(false), "MotorFault": .bool(true),
    ]
}

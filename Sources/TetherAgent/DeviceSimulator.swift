public import TetherCore

/// Changes a device's read-only points over time so that watching it is interesting: numbers
/// drift by a step or two within their range, read-only bools flip now and then, alerts trip and
/// clear, faults trip rarely and clear.
public struct DeviceSimulator: Sendable {
    /// The device whose read-only points the simulation changes (writable points are left alone).
    public let device: VirtualDevice
    /// Time between two ticks of ``run()``.
    public var interval: Duration
    /// Seed of the generator ``run()`` uses: from the same status, the same seed makes the same changes.
    public var seed: UInt64

    /// A simulator for `device`; nothing changes until ``run()`` is called.
    public init(device: VirtualDevice, interval: Duration = .seconds(2), seed: UInt64 = 1) {
        self.device = device
        self.interval = interval
        self.seed = seed
    }

    /// Ticks until cancelled.
    public func run() async {
        var generator = SplitMix64(seed: seed)
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            device.update(nextChanges(using: &generator))
        }
    }

    /// One tick's changes (public for tests that step the simulation by hand).
    public func nextChanges(using generator: inout some RandomNumberGenerator) -> [String: DataValue] {
        let current = device.status.allValues
        var changes: [String: DataValue] = [:]
        for point in device.model.dataPoints where point.kind != .writable {
            let value = current[point.name]
            switch (point.type, value) {
            case (.number(let spec), .some(let value)):
                guard let raw = try? spec.raw(for: value.doubleValue, dataPoint: point.name) else { continue }
                let step = Int64.random(in: -2...2, using: &generator)
                let next = min(max(Int64(raw) + step, Int64(spec.rawMin)), Int64(spec.rawMax))
                changes[point.name] = spec.value(raw: UInt32(next))
            case (.bool, .some(.bool(let on))):
                let chance: Double
                switch point.kind {
                case .alert: chance = on ? 0.3 : 0.05
                case .fault: chance = on ? 0.3 : 0.02
                default: chance = 0.1
                }
                if Double.random(in: 0..<1, using: &generator) < chance { changes[point.name] = .bool(!on) }
            case (.enumeration(let labels), _):
                if Double.random(in: 0..<1, using: &generator) < 0.05 {
                    changes[point.name] = .int(Int64.random(in: 0..<Int64(labels.count), using: &generator))
                }
            default:
                continue
            }
        }
        return changes
    }
}

extension DataValue {
    var doubleValue: Double {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        case .bool(let value): return value ? 1 : 0
        default: return 0
        }
    }
}

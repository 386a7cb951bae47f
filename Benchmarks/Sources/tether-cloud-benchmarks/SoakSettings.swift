import Foundation
import Synchronization
import TetherCore

/// What a soak run does, shared by every simulated device and app.
struct SoakSettings: Sendable {
    /// The devices' MQTT keep-alive: the cloud must show a silent device offline 1.5 × this
    /// after it last heard from it.
    var keepAlive: UInt16
    /// Seconds between a device's property posts (each device draws ±20 % around it).
    var postInterval: Double
    /// Faults per device per minute of the chaos phase.
    var faultsPerMinute: Double
    /// Devices whose answers to property sets come late: 1 to 40 s, some after the cloud's
    /// 30 s answer deadline.
    var slowFraction: Double
    var seed: UInt64
    /// The nodes' names (as the database's `online_node` has them), in port order.
    var nodeNames: [String]

    /// Wall-clock milliseconds, the unit of the database's timestamps.
    static func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// The faults a device may suffer, drawn with these weights.
enum SoakFault: String, CaseIterable, Sendable {
    /// The connection closes without DISCONNECT; the device reconnects within seconds.
    case drop
    /// The cloud is left holding a connection that says nothing more (no PINGREQ, no
    /// acknowledgements), while the device is away for a while.
    case halfOpen
    /// The device goes away (with or without DISCONNECT) and comes back 5 to 60 s later.
    case reboot
    /// A second connection with the device's identity takes over the first.
    case duplicate

    var weight: Double {
        switch self {
        case .drop: 0.3
        case .halfOpen: 0.2
        case .reboot: 0.3
        case .duplicate: 0.2
        }
    }

    static func draw(using generator: inout SplitMix64) -> SoakFault {
        var point = Double.random(in: 0..<1, using: &generator)
        for fault in allCases {
            point -= fault.weight
            if point < 0 { return fault }
        }
        return .drop
    }
}

/// Where the run is: faults happen only in the chaos phase, and everything stops at `stop`.
final class SoakPhase: Sendable {
    private let chaos = Atomic<Bool>(false)
    private let stopping = AsyncPromise<Void, Never>()

    var faultsEnabled: Bool { chaos.load(ordering: .relaxed) }
    var isStopping: Bool { stopping.isResolved }

    func setChaos(_ enabled: Bool) { chaos.store(enabled, ordering: .relaxed) }
    func stop() { stopping.resolve(.success(())) }

    /// Sleeps for `duration`, or less when the run stops; true when it slept the whole time.
    func sleep(_ duration: Duration) async -> Bool {
        guard !isStopping else { return false }
        let stopped = await within(duration) {
            _ = await self.stopping.result(ifCancelled: { .success(()) })
            return true
        }
        return stopped == nil
    }

    /// Returns when the run stops.
    func stopped() async {
        _ = await stopping.result(ifCancelled: { .success(()) })
    }
}

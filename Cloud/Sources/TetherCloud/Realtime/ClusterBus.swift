import TetherCore
public import ServiceLifecycle

/// How cloud nodes tell each other (and themselves) what happened. Every node receives every
/// event it or another node published, in the order each node published them. Delivery is at
/// most once: what must not be lost (the command ledger, device status) is in the database,
/// and events only say that it changed.
public protocol ClusterBus: Service {
    func publish(_ event: ClusterEvent) async
    /// Several events, in order; a bus between nodes may carry them together.
    func publish(_ events: [ClusterEvent]) async
    /// Events from now on, until the consumer stops iterating or the bus stops.
    func events() -> AsyncStream<ClusterEvent>
}

extension ClusterBus {
    public func publish(_ events: [ClusterEvent]) async {
        for event in events { await publish(event) }
    }
}

/// One node, in-process: the bus of a SQLite cloud.
public final class LocalClusterBus: ClusterBus {
    private let broadcast = Broadcast<ClusterEvent>(bufferSize: 100_000)

    public init() {}

    public func publish(_ event: ClusterEvent) async { broadcast.yield(event) }

    public func events() -> AsyncStream<ClusterEvent> { broadcast.subscribe() }

    public func run() async throws {
        try? await gracefulShutdown()
        broadcast.finish()
    }
}

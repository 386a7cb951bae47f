import Foundation
import PostgresNIO
public import Logging
import ServiceLifecycle
import TetherCore

/// Several nodes sharing one PostgreSQL database: events travel with `NOTIFY` on one channel
/// and every node `LISTEN`s on it. An event too large for a notification (PostgreSQL's limit is
/// 8000 bytes) is written to `cluster_spill` and the notification carries its row id.
public final class PostgresClusterBus: ClusterBus {
    static let channel = "tether_events"
    static let maximumInlinePayload = 7_000
    static let spillLifetimeMs: Int64 = 300_000

    private let engine: PostgresEngine
    private let logger: Logger
    private let broadcast = Broadcast<ClusterEvent>(bufferSize: 100_000)
    private let listening = AsyncPromise<Void, Never>()

    public init(engine: PostgresEngine, logger: Logger) {
        self.engine = engine
        self.logger = logger
    }

    public func publish(_ event: ClusterEvent) async {
        await publish([event])
    }

    /// Events travel as JSON arrays, as many to a notification as fit: a batch of reports costs
    /// a few round trips, not one each.
    public func publish(_ events: [ClusterEvent]) async {
        var pending: [String] = []
        var size = 2
        do {
            for event in events {
                let text = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
                if !pending.isEmpty, size + text.utf8.count + 1 > Self.maximumInlinePayload {
                    try await notify("[" + pending.joined(separator: ",") + "]")
                    pending = []
                    size = 2
                }
                pending.append(text)
                size += text.utf8.count + 1
            }
            if !pending.isEmpty { try await notify("[" + pending.joined(separator: ",") + "]") }
        } catch {
            logger.error("cannot publish cluster events", metadata: ["error": "\(error)", "count": "\(events.count)"])
        }
    }

    private func notify(_ payload: String) async throws {
        if payload.utf8.count <= Self.maximumInlinePayload {
            try await engine.query("SELECT pg_notify($1, $2)", .text(Self.channel), .text(payload))
            return
        }
        // One event too large for a notification: the notification carries where it is. Spilled
        // events are read within moments of their notification; older ones go now.
        let now = Clock.unixMilliseconds()
        try await engine.query("DELETE FROM cluster_spill WHERE created_ms < $1", .int(now - Self.spillLifetimeMs))
        let row = try await engine.first(
            "INSERT INTO cluster_spill (body, created_ms) VALUES ($1, $2) RETURNING id",
            .text(payload), .int(now)
        )
        let id = try row?.int("id") ?? 0
        try await engine.query("SELECT pg_notify($1, $2)", .text(Self.channel), .text("spill:\(id)"))
    }

    public func events() -> AsyncStream<ClusterEvent> { broadcast.subscribe() }

    /// Resolves once the node listens (events published before then may not arrive here).
    public func ready() async { await listening.result(ifCancelled: { .success(()) }).get() }

    /// Listens until the service group shuts down, reconnecting when the connection drops.
    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await engine.listen(channel: Self.channel) { notifications in
                        listening.resolve(.success(()))
                        for try await notification in notifications {
                            await deliver(notification.payload)
                        }
                    }
                } catch _ where Task.isCancelled {
                    break
                } catch {
                    logger.warning("cluster bus lost its connection; listening again", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
        }
        broadcast.finish()
    }

    private func deliver(_ payload: String) async {
        var text = payload
        if payload.hasPrefix("spill:"), let id = Int64(payload.dropFirst("spill:".count)) {
            guard let body = try? await engine.first("SELECT body FROM cluster_spill WHERE id = $1", .int(id))?.text("body") else {
                logger.warning("a spilled cluster event is gone", metadata: ["id": "\(id)"])
                return
            }
            text = body
        }
        do {
            for event in try JSONDecoder().decode([ClusterEvent].self, from: Data(text.utf8)) { broadcast.yield(event) }
        } catch {
            logger.warning("unreadable cluster event", metadata: ["error": "\(error)"])
        }
    }
}

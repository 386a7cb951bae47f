import Logging
import Synchronization
import TetherCore

/// The node that received a device's message puts it in the outbox of every forwarder of the
/// device's product that wants its kind (so each message is forwarded once, whichever node
/// delivers it). Forwarders are read at most every few seconds: a product without any costs
/// nothing per message.
final class DataForwarding: Sendable {
    let database: any SQLDatabase
    let logger: Logger
    /// How long a product's forwarders are trusted before they are read again.
    static let refreshMs: Int64 = 5_000
    private let cache = Mutex<(readAtMs: Int64, byProduct: [String: [ForwarderRecord]])>((-1, [:]))

    init(database: any SQLDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Queues `messages` for their products' forwarders. Failures are logged: forwarding never
    /// holds up the device.
    func forward(_ messages: [ForwardedMessage]) async {
        guard !messages.isEmpty else { return }
        do {
            let forwarders = try await current()
            var items: [(forwarderID: Int64, body: String)] = []
            for message in messages {
                for forwarder in forwarders[message.productKey] ?? [] where forwarder.kinds.contains(message.kind) {
                    items.append((forwarder.id, message.json.serialized()))
                }
            }
            try await ForwarderStore(database).enqueue(items, atMs: Clock.unixMilliseconds())
        } catch {
            logger.error("device messages could not be queued for forwarding", metadata: ["count": "\(messages.count)", "error": "\(error)"])
        }
    }

    /// Whether any forwarder takes messages of `kind` (as last read): when none does, callers
    /// need not look up what a message would carry.
    func isForwarding(_ kind: ForwardKind) async -> Bool {
        guard let forwarders = try? await current() else { return true }
        return forwarders.values.contains { $0.contains { $0.kinds.contains(kind) } }
    }

    private func current() async throws -> [String: [ForwarderRecord]] {
        let now = Clock.unixMilliseconds()
        let cached = cache.withLock { $0 }
        if cached.readAtMs >= 0, now - cached.readAtMs < Self.refreshMs { return cached.byProduct }
        let fresh = Dictionary(grouping: try await ForwarderStore(database).list(), by: \.productKey)
        cache.withLock { $0 = (now, fresh) }
        return fresh
    }
}

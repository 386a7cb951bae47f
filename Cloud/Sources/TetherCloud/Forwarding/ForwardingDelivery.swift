import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import TetherCore

/// Delivers the forwarding outbox: leases due messages (one node each), POSTs each to its
/// forwarder's URL with `X-Tether-Message-Id` and `X-Tether-Signature: sha256=HMAC(secret,
/// body)`, and records the outcome: a 2xx answer delivers it; anything else is tried again after
/// 1, 2, 4 … seconds (at most 10 minutes apart) until ``maximumAttempts``, then it is kept as failed.
/// A message is delivered at least once: receivers drop repeats by message id.
struct ForwardingDelivery: Service {
    let database: any SQLDatabase
    let logger: Logger
    var pollInterval: Duration = .milliseconds(500)
    var requestTimeout: TimeAmount = .seconds(10)
    static let maximumAttempts: Int64 = 20
    static let batch = 100

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let delivered = try await deliverDue()
                    if delivered < Self.batch { try? await Task.sleep(for: pollInterval) }
                } catch {
                    // Shutting down: the query was cancelled, nothing failed.
                    guard !Task.isCancelled else { return }
                    logger.warning("forwarding failed", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(2))
                }
            }
        }
    }

    /// One batch; how many messages it handled.
    func deliverDue() async throws -> Int {
        let now = Clock.unixMilliseconds()
        let store = ForwarderStore(database)
        guard try await store.anyDue(now: now) else { return 0 }
        let items = try await store.claim(now: now, leaseUntilMs: now + 60_000, limit: Self.batch)
        guard !items.isEmpty else { return 0 }
        let forwarders = Dictionary(uniqueKeysWithValues: try await store.list().map { ($0.id, $0) })
        await withTaskGroup(of: Void.self) { group in
            for item in items {
                guard let forwarder = forwarders[item.forwarderID] else { continue }
                group.addTask { await deliver(item, to: forwarder) }
            }
        }
        return items.count
    }

    private func deliver(_ item: ForwardItem, to forwarder: ForwarderRecord) async {
        let store = ForwarderStore(database)
        var outcome: String?
        do {
            var request = HTTPClientRequest(url: forwarder.url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "Tether-Cloud/" + TetherVersion.current)
            request.headers.add(name: "X-Tether-Message-Id", value: String(item.id))
            request.headers.add(name: "X-Tether-Signature", value: "sha256=" + Self.signature(item.body, secret: forwarder.secret))
            request.body = .bytes(ByteBuffer(string: item.body))
            let response = try await HTTPClient.shared.execute(request, timeout: requestTimeout)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if !(200..<300).contains(response.status.code) { outcome = "HTTP \(response.status.code)" }
        } catch {
            outcome = "\(error)"
        }
        let now = Clock.unixMilliseconds()
        do {
            guard let outcome else {
                try await store.delivered(item.id, atMs: now)
                return
            }
            let attempts = item.attempts + 1
            let next = attempts >= Self.maximumAttempts ? nil : now + Self.backoffMs(attempts: attempts)
            try await store.attemptFailed(item.id, error: String(outcome.prefix(300)), nextMs: next, atMs: now)
            logger.info("a forwarded message was not taken", metadata: ["forwarder": "\(forwarder.id)", "attempt": "\(attempts)", "error": "\(outcome)"])
        } catch {
            logger.warning("a forwarding outcome could not be recorded (the message will be sent again)", metadata: ["error": "\(error)"])
        }
    }

    /// 1 s, 2 s, 4 s, … at most 10 minutes.
    static func backoffMs(attempts: Int64) -> Int64 { min(1000 << min(attempts - 1, 20), 600_000) }

    static func signature(_ body: String, secret: String) -> String {
        Secrets.lowercaseHex(HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: SymmetricKey(data: Data(secret.utf8))))
    }
}

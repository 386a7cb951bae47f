/// Counters in fixed time windows, kept in the database so that every node sharing it counts
/// together: an attacker spreading requests over several nodes gets no more than from one.
///
/// It is also the store of the `rate_limits` table.
struct RateLimiter: Sendable {
    /// The database, or a transaction of it.
    let database: any SQLExecutor

    /// Counts one event under `key` and tells whether it is within `limit`. The event is counted
    /// either way, so a client that keeps trying stays refused until the window ends.
    func consume(_ key: String, _ limit: RateLimit, now: Int64 = Clock.unixNow()) async throws(StorageError) -> Decision {
        let start = now - now % limit.window
        let row = try await database.first(
            """
            INSERT INTO rate_limits (key, window_start, count, expires_at) VALUES ($1, $2, 1, $3)
            ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1 RETURNING count
            """,
            .text(key), .int(start), .int(start + limit.window)
        )
        let count = try row?.int("count") ?? 1
        try await pruneNowAndThen(now: now)
        return Decision(count: count, retryAfter: count <= limit.count ? nil : start + limit.window - now)
    }

    /// Whether `key` is already over `limit`, without counting anything.
    func check(_ key: String, _ limit: RateLimit, now: Int64 = Clock.unixNow()) async throws(StorageError) -> Decision {
        let start = now - now % limit.window
        let count =
            try await database.first(
                "SELECT count FROM rate_limits WHERE key = $1 AND window_start = $2", .text(key), .int(start)
            )?.int("count") ?? 0
        return Decision(count: count, retryAfter: count < limit.count ? nil : start + limit.window - now)
    }

    /// Takes back one event counted under `key` in the current window: an attempt counted before
    /// it was checked (so that parallel attempts cannot all pass a check) that succeeded.
    func refund(_ key: String, _ limit: RateLimit, now: Int64 = Clock.unixNow()) async throws(StorageError) {
        try await database.query(
            "UPDATE rate_limits SET count = count - 1 WHERE key = $1 AND window_start = $2 AND count > 0", .text(key), .int(now - now % limit.window)
        )
    }

    /// Forgets `key` in the current window (a successful login clears its failures).
    func reset(_ key: String, _ limit: RateLimit, now: Int64 = Clock.unixNow()) async throws(StorageError) {
        try await database.query("DELETE FROM rate_limits WHERE key = $1 AND window_start = $2", .text(key), .int(now - now % limit.window))
    }

    /// Forgets every window of `key` and of the keys under it (`key:…`), whatever their limit.
    func forget(keyAndBelow key: String) async throws(StorageError) {
        try await database.query("DELETE FROM rate_limits WHERE key = $1 OR key LIKE $2", .text(key), .text("\(key):%"))
    }

    /// Ended windows are deleted about once in a hundred counts: the table stays as small as
    /// the traffic of the longest window.
    private func pruneNowAndThen(now: Int64) async throws(StorageError) {
        guard UInt8.random(in: 0..<100) == 0 else { return }
        try await database.query("DELETE FROM rate_limits WHERE expires_at <= $1", .int(now))
    }

    /// The outcome of a count: how many events the window holds, and how long to wait when it
    /// holds too many.
    struct Decision: Sendable, Equatable {
        var count: Int64
        var retryAfter: Int64?

        static let allowed = Decision(count: 0, retryAfter: nil)

        var isAllowed: Bool { retryAfter == nil }

        /// The 9041 answer for a limited decision.
        func require(_ what: String) throws(CloudAPIError) {
            if let retryAfter { throw .requestThrottled(detail: what, retryAfter: max(1, retryAfter)) }
        }
    }
}

/// At most `count` events in `window` seconds.
public struct RateLimit: Sendable, Equatable {
    public var count: Int64
    public var window: Int64

    public init(_ count: Int64, per window: Int64) {
        precondition(count >= 0 && window > 0, "a rate limit counts from 0 over a window of at least a second")
        self.count = count
        self.window = window
    }
}

/// How a connection that dropped is tried again: the first delay, how it grows, its ceiling,
/// and how much each delay is spread so that many clients that lost the same server do not all
/// come back at the same instant. Every connection the package keeps uses it: the MQTT client,
/// the cloud's real-time connection, a device's LAN session and an agent's cloud link.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The delay before the first attempt after a loss.
    public var initialDelay: Duration
    /// What each failed attempt multiplies the delay by.
    public var multiplier: Double
    /// The longest delay, however many attempts failed.
    public var maximumDelay: Duration
    /// Each delay is multiplied by a random factor within 1 ± `jitter` (0 … 1).
    public var jitter: Double

    /// A policy; the defaults go from 0.5 s, doubling, up to 30 s, each ±20 %.
    public init(initialDelay: Duration = .milliseconds(500), multiplier: Double = 2, maximumDelay: Duration = .seconds(30), jitter: Double = 0.2) {
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maximumDelay = max(initialDelay, maximumDelay)
        self.jitter = min(max(0, jitter), 1)
    }

    /// The delay before attempt `attempt` (0: the first after a loss), before jitter.
    public func baseDelay(attempt: Int) -> Duration {
        var delay = initialDelay
        var step = 0
        while step < attempt, delay < maximumDelay {
            delay = delay * multiplier
            step += 1
        }
        return min(delay, maximumDelay)
    }

    /// The delay before attempt `attempt`, jittered with `generator`.
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let base = baseDelay(attempt: attempt)
        guard jitter > 0 else { return base }
        return base * Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
    }

    /// The delay before attempt `attempt`, jittered with the system's generator.
    public func delay(attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &generator)
    }
}

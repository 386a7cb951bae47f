import Testing
import TetherCore

@Suite("The reconnect policy")
struct ReconnectPolicyTests {
    @Test("delays grow by the multiplier from the first, up to the ceiling")
    func growth() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(500), multiplier: 2, maximumDelay: .seconds(5), jitter: 0)
        #expect((0..<7).map { policy.baseDelay(attempt: $0) } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5)])
        #expect(policy.baseDelay(attempt: 1_000_000) == .seconds(5), "however many attempts")
        #expect(policy.delay(attempt: 2) == .seconds(2), "no jitter, no spread")
    }

    @Test("jitter spreads each delay within its bounds, and the generator decides it")
    func jitter() {
        let policy = ReconnectPolicy(initialDelay: .seconds(1), jitter: 0.2)
        var generator = SplitMix64(seed: 7)
        var seen: Set<Duration> = []
        for _ in 0..<200 {
            let delay = policy.delay(attempt: 0, using: &generator)
            #expect(delay >= .milliseconds(800) && delay <= .milliseconds(1200))
            seen.insert(delay)
        }
        #expect(seen.count > 50, "delays are spread")
        var first = SplitMix64(seed: 1), second = SplitMix64(seed: 1)
        #expect(policy.delay(attempt: 3, using: &first) == policy.delay(attempt: 3, using: &second))
    }

    @Test("nonsense settings are brought into range")
    func clamping() {
        let policy = ReconnectPolicy(initialDelay: .seconds(2), multiplier: 0.5, maximumDelay: .seconds(1), jitter: 3)
        #expect(policy.multiplier == 1)
        #expect(policy.maximumDelay == .seconds(2))
        #expect(policy.jitter == 1)
        #expect(policy.baseDelay(attempt: 5) == .seconds(2))
    }
}

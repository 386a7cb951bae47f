import Synchronization
import Testing

@testable import TetherAgent

/// The simulated Tuya device's outages and delays, with a clock the test moves.
@Suite("Agent: Tuya fault injection")
struct TuyaFaultsTests {
    final class Clock: Sendable {
        let now = Mutex(ContinuousClock.now)
        func advance(_ duration: Duration) { now.withLock { $0 += duration } }
    }

    @Test("after N frames the device goes dark for a while, then answers N more, and so on")
    func outages() {
        let clock = Clock()
        let injector = TuyaFaultInjector(TuyaFaults(responseDelay: .milliseconds(20), goDarkAfter: 2, darkFor: .seconds(5))) {
            clock.now.withLock { $0 }
        }
        #expect(injector.answer() == .milliseconds(20))
        #expect(injector.answer() == .milliseconds(20))
        #expect(injector.answer() == nil)
        clock.advance(.seconds(4))
        #expect(injector.answer() == nil)
        clock.advance(.seconds(1))
        #expect(injector.answer() == .milliseconds(20))
        #expect(injector.answer() == .milliseconds(20))
        #expect(injector.answer() == nil)
    }

    @Test("without faults every frame goes at once")
    func none() {
        let injector = TuyaFaultInjector(TuyaFaults())
        for _ in 0..<100 { #expect(injector.answer() == .zero) }
    }
}

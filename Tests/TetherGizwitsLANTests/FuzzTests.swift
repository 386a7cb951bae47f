import Testing
import TetherCore
import TetherTestSupport

@Suite("Fuzzing the GAgent LAN decoders (bounded)")
struct FuzzTests {
    @Test("arbitrary and mutated frames never crash and never break an invariant", arguments: [UInt64(1), 2, 3, 4])
    func bounded(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 10_000, seed: seed, target: FuzzTargets.gizwitsLAN) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }

    @Test("the mutated seeds reach past the header checks into message parsing")
    func seedsAreValid() {
        for seed in FuzzTargets.seeds {
            #expect(FuzzTargets.gizwitsLAN(seed) == nil)
        }
    }
}

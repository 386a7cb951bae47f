import Testing
import TetherCore
import TetherTestSupport

/// Bounded fuzzing of the profile decoders: random bytes and mutated test vectors never crash
/// them, and what decodes survives a round trip (the same targets `tether-fuzz lw003|diot` runs).
@Suite("Bluetooth profile fuzzing")
struct BluetoothFuzzTests {
    @Test("LW003-V3 decoders (bounded)", arguments: [UInt64(1), 2])
    func lw003(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 2_000, seed: seed, seeds: FuzzTargets.lw003Seeds, target: FuzzTargets.lw003) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }

    @Test("DIoT decoders (bounded)", arguments: [UInt64(1), 2])
    func diot(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 2_000, seed: seed, seeds: FuzzTargets.diotSeeds, target: FuzzTargets.diot) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }

    @Test("every seed is valid input that passes its target")
    func seeds() {
        for seed in FuzzTargets.lw003Seeds { #expect(FuzzTargets.lw003(seed) == nil, "\(seed.tetherHex)") }
        for seed in FuzzTargets.diotSeeds { #expect(FuzzTargets.diot(seed) == nil, "\(seed.tetherHex)") }
    }
}

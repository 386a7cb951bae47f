import Testing
import TetherTestSupport
import TetherCore

@Suite("Fuzzing the MQTT decoder (bounded)")
struct MQTTFuzzTests {
    @Test("arbitrary and mutated packets never crash and what is read round-trips", arguments: [UInt64(1), 2, 3, 4])
    func bounded(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 10_000, seed: seed, seeds: FuzzTargets.mqttSeeds, target: FuzzTargets.mqtt) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }

    @Test("the seeds are valid packets")
    func seeds() {
        for seed in FuzzTargets.mqttSeeds { #expect(FuzzTargets.mqtt(seed) == nil) }
    }
}

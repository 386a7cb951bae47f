// The fuzz harness. Built with `-sanitize=fuzzer -D TETHER_LIBFUZZER` (scripts/fuzz.sh) it is a
// libFuzzer binary; built normally it replays the files named on the command line, or runs random
// inputs when given none, so that a crash found by libFuzzer can be reproduced anywhere.
import Foundation
import TetherTestSupport

enum FuzzHarness {
    static let targets: [String: @Sendable ([UInt8]) -> String?] = [
        "gizwits-lan": FuzzTargets.gizwitsLAN, "mqtt": FuzzTargets.mqtt, "alink": FuzzTargets.alink,
        "lan-grant": FuzzTargets.lanGrant, "tuya": FuzzTargets.tuya, "smart-config": FuzzTargets.smartConfig,
        "esp-provisioning": FuzzTargets.espProvisioning, "lw003": FuzzTargets.lw003, "diot": FuzzTargets.diot,
        "dbus": FuzzTargets.dbus,
    ]
    static let seeds: [String: [[UInt8]]] = [
        "gizwits-lan": FuzzTargets.seeds, "mqtt": FuzzTargets.mqttSeeds, "alink": FuzzTargets.alinkSeeds,
        "lan-grant": FuzzTargets.lanGrantSeeds, "tuya": FuzzTargets.tuyaSeeds, "smart-config": FuzzTargets.smartConfigSeeds,
        "esp-provisioning": FuzzTargets.espProvisioningSeeds, "lw003": FuzzTargets.lw003Seeds, "diot": FuzzTargets.diotSeeds,
        "dbus": FuzzTargets.dbusSeeds,
    ]
}

#if TETHER_LIBFUZZER
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let name = ProcessInfo.processInfo.environment["TETHER_FUZZ_TARGET"] ?? "gizwits-lan"
    if let problem = FuzzHarness.targets[name]!(Array(UnsafeBufferPointer(start: start, count: count))) {
        fatalError(problem)
    }
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

// SwiftPM links executables with `main` aliased to this symbol; hand control to libFuzzer.
@_cdecl("tether_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { fuzz($0, $1) }
}
#else
@main
struct FuzzReplay {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let name = arguments.first.flatMap { FuzzHarness.targets[$0] != nil ? $0 : nil } ?? "gizwits-lan"
        if arguments.first == name { arguments.removeFirst() }
        let target = FuzzHarness.targets[name]!
        guard !arguments.isEmpty else {
            let iterations = 1_000_000
            if let failure = FuzzTargets.run(
                iterations: iterations, seed: UInt64(Date().timeIntervalSince1970), seeds: FuzzHarness.seeds[name]!, target: target)
            {
                print("FAIL \(failure.problem): \(failure.input.map { String($0, radix: 16) })")
                exit(1)
            }
            print("\(name): \(iterations) random inputs, no failure")
            return
        }
        for path in arguments {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            print("\(path): \(target(bytes) ?? "ok")")
        }
    }
}
#endif

// The fuzz harness. Built with `-sanitize=fuzzer -D TETHER_LIBFUZZER` (see scripts/fuzz.sh) it is
// a libFuzzer binary; built normally it replays the files named on the command line, or runs
// random inputs when given none, so that a crash found by libFuzzer can be reproduced anywhere.
import Foundation
import TetherTestSupport

let targets: [String: ([UInt8]) -> String?] = ["gizwits-lan": FuzzTargets.gizwitsLAN]

#if TETHER_LIBFUZZER
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let name = ProcessInfo.processInfo.environment["TETHER_FUZZ_TARGET"] ?? "gizwits-lan"
    if let problem = targets[name]!(Array(UnsafeBufferPointer(start: start, count: count))) {
        fatalError(problem)
    }
    return 0
}
#else
var arguments = Array(CommandLine.arguments.dropFirst())
let name = arguments.first.flatMap { targets[$0] != nil ? $0 : nil } ?? "gizwits-lan"
if arguments.first == name { arguments.removeFirst() }
let target = targets[name]!
if arguments.isEmpty {
    if let failure = FuzzTargets.run(iterations: 1_000_000, seed: UInt64(Date().timeIntervalSince1970), target: target) {
        print("FAIL \(failure.problem): \(failure.input.map { String($0, radix: 16) })")
        exit(1)
    }
    print("1000000 random inputs, no failure")
} else {
    for path in arguments {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        print("\(path): \(target(bytes) ?? "ok")")
    }
}
#endif

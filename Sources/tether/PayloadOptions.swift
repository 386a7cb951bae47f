import ArgumentParser
import TetherCore

/// Bytes given on the command line as text or as hex (`rrpc`, `publish`).
struct PayloadOptions: ParsableArguments {
    @Option(name: .long, help: "The bytes, as text.")
    var payload: String?

    @Option(name: .long, help: "The bytes, as hex (instead of --payload).")
    var hex: String?

    func validate() throws {
        guard (payload == nil) != (hex == nil) else { throw ValidationError("give the bytes as --payload TEXT or --hex BYTES") }
        if let hex, [UInt8](tetherHex: hex) == nil { throw ValidationError("--hex takes an even number of hex digits") }
    }

    var bytes: [UInt8] { payload.map { Array($0.utf8) } ?? [UInt8](tetherHex: hex ?? "") ?? [] }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import TetherCore

/// Writes a line to standard output and flushes, so that scripts reading a pipe see it at once.
public func printLine(_ text: String) {
    print(text)
    fflush(nil)
}

/// Writes a line to standard error.
public func printError(_ text: String) {
    let line = Array((text + "\n").utf8)
    line.withUnsafeBytes { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Writes one JSON document as a line.
public func printJSON(_ value: JSONValue, pretty: Bool = false) {
    printLine(value.serialized(pretty: pretty))
}

/// `NAME=value, NAME=value` for people.
public func describe(_ values: [String: DataValue]) -> String {
    values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ", ")
}

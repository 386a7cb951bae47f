public import Foundation
import Dispatch

/// Runs the project's executables (`tether`, `tether-agent`) from tests.
public enum Executables {
    /// Where the built executables are: `TETHER_BIN_DIR`, or next to the test bundle.
    public static var directory: URL {
        if let override = ProcessInfo.processInfo.environment["TETHER_BIN_DIR"] {
            return URL(fileURLWithPath: override)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    public static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: path("tether")) && FileManager.default.isExecutableFile(atPath: path("tether-agent"))
    }

    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs a command to completion (killed after `timeout`). The blocking reads and the wait run
    /// on a thread of their own, never on the concurrency pool the other tests share.
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(20)) async throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let killer = Task {
            try await Task.sleep(for: timeout)
            process.terminate()
        }
        defer { killer.cancel() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let group = DispatchGroup()
                let errData = DataBox()
                group.enter()
                Thread.detachNewThread {
                    errData.data = err.fileHandleForReading.readDataToEndOfFile()
                    group.leave()
                }
                let outData = out.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: Output(
                    status: process.terminationStatus,
                    stdout: String(decoding: outData, as: UTF8.self),
                    stderr: String(decoding: errData.data, as: UTF8.self)
                ))
            }
        }
    }

    /// A long-running process whose standard output is read line by line; terminated on `stop()`.
    public final class Background: @unchecked Sendable {
        // @unchecked: `process` is only touched from the owning test, `lines` is an AsyncStream.
        let process = Process()
        public let lines: AsyncStream<String>

        public init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            let (stream, continuation) = AsyncStream.makeStream(of: String.self)
            lines = stream
            let handle = out.fileHandleForReading
            Thread.detachNewThread {
                var buffer = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer.removeSubrange(buffer.startIndex...newline)
                    }
                }
                continuation.finish()
            }
            try process.run()
        }

        /// Terminates the process (SIGTERM) without waiting on the caller's thread.
        public func stop() {
            if process.isRunning { process.terminate() }
        }

        deinit { stop() }
    }
}

/// Written by one thread before `DispatchGroup.leave()`, read by another after `wait()`: the group
/// orders the two, which the compiler cannot see.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}

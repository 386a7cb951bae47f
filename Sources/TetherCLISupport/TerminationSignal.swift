import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` until it returns or the process gets SIGINT or SIGTERM, which cancel it so that
/// it can close its sockets and stop cleanly.
public func runUntilTerminated(_ body: @escaping @Sendable () async throws -> Void) async throws {
    let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGINT, SIGTERM] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { continuation.yield(number) }
        source.resume()
        sources.append(source)
    }
    defer { sources.forEach { $0.cancel() } }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await body() }
        group.addTask {
            for await _ in signals { return }
        }
        try await group.next()
        group.cancelAll()
        continuation.finish()
    }
}

/// The numbers of the given signals as they arrive (their default action is turned off). The
/// stream ends, and the handlers go, when its consumer stops.
public func signalStream(_ numbers: [Int32]) -> AsyncStream<Int32> {
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    var sources: [any DispatchSourceSignal] = []
    for number in numbers {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { continuation.yield(number) }
        source.resume()
        sources.append(source)
    }
    let handlers = SignalSources(sources)
    continuation.onTermination = { _ in handlers.cancel() }
    return stream
}

private final class SignalSources: @unchecked Sendable {
    // Only touched by `cancel()`, once, from the stream's termination.
    private let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { sources.forEach { $0.cancel() } }
}

import Synchronization

/// A value that becomes available once; any number of tasks can wait for it. The first
/// ``resolve(_:)`` wins, later ones are ignored.
public final class AsyncPromise<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, TetherError>?
        var waiters: [CheckedContinuation<Result<Value, TetherError>, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    public func resolve(_ result: Result<Value, TetherError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Value, TetherError>, Never>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    public var isResolved: Bool { state.withLock { $0.result != nil } }

    /// Waits for the result.
    public func value() async throws(TetherError) -> Value {
        let result = await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<Value, TetherError>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        return try result.get()
    }
}

import Synchronization

/// A value that becomes available once; any number of tasks can wait for it. The first
/// ``resolve(_:)`` wins, later ones are ignored.
public final class AsyncPromise<Value: Sendable, Failure: Error>: Sendable {
    private struct State {
        var result: Result<Value, Failure>?
        var waiters: [CheckedContinuation<Result<Value, Failure>, Never>] = []
    }

    private let state = Mutex(State())

    /// An unresolved promise.
    public init() {}

    /// Completes the promise and wakes every waiting task; ignored when it is already resolved.
    public func resolve(_ result: Result<Value, Failure>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Value, Failure>, Never>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Whether ``resolve(_:)`` has been called, so waiting would return at once.
    public var isResolved: Bool { state.withLock { $0.result != nil } }

    /// Waits for the result.
    public func value() async throws(Failure) -> Value {
        try await result().get()
    }

    /// Waits for the result for at most `timeout`; after that the promise resolves to
    /// `otherwise()`, for every waiter.
    public func result(within timeout: Duration, otherwise: @escaping @Sendable () -> Result<Value, Failure>) async -> Result<Value, Failure> {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            resolve(otherwise())
        }
        defer { timer.cancel() }
        return await result()
    }

    /// Waits for the result, success or failure.
    public func result() async -> Result<Value, Failure> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<Value, Failure>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

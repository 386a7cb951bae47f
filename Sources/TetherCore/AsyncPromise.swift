import Synchronization

/// A value that becomes available once; any number of tasks can wait for it. The first
/// ``resolve(_:)`` wins, later ones are ignored.
///
/// Every wait honours cancellation: a cancelled waiter stops waiting at once with the result
/// it names for that case, and the promise stays as it is for the others.
public final class AsyncPromise<Value: Sendable, Failure: Error>: Sendable {
    private typealias Waiter = CheckedContinuation<Result<Value, Failure>, Never>

    private struct State {
        var result: Result<Value, Failure>?
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        /// Waiters cancelled before they were registered.
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    /// An unresolved promise.
    public init() {}

    /// Completes the promise and wakes every waiting task; ignored when it is already resolved.
    public func resolve(_ result: Result<Value, Failure>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Whether ``resolve(_:)`` has been called, so waiting would return at once.
    public var isResolved: Bool { state.withLock { $0.result != nil } }

    /// Waits for the value; a cancelled waiter throws `cancelled()`.
    public func value(ifCancelled cancelled: @escaping @Sendable () -> Failure) async throws(Failure) -> Value {
        try await result(ifCancelled: { .failure(cancelled()) }).get()
    }

    /// Waits for the result for at most `timeout`; after that the promise resolves to
    /// `otherwise()`, for every waiter. A cancelled waiter gets `otherwise()` alone.
    public func result(within timeout: Duration, otherwise: @escaping @Sendable () -> Result<Value, Failure>) async -> Result<Value, Failure> {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Cancelled: the result came, or the waiter was cancelled; neither times out.
                do { try await Task.sleep(for: timeout) } catch { return }
                self.resolve(otherwise())
            }
            let result = await self.result(ifCancelled: otherwise)
            group.cancelAll()
            return result
        }
    }

    /// Waits for the result, success or failure; a cancelled waiter gets `cancelled()`.
    public func result(ifCancelled cancelled: @escaping @Sendable () -> Result<Value, Failure>) async -> Result<Value, Failure> {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let ready = state.withLock { state -> Result<Value, Failure>? in
                    let wasCancelled = state.cancelled.remove(id) != nil
                    if let result = state.result { return result }
                    if wasCancelled { return cancelled() }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard state.result == nil else { return nil }
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    // Not registered yet: the registration sees this and returns at once.
                    state.cancelled.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume(returning: cancelled())
        }
    }
}

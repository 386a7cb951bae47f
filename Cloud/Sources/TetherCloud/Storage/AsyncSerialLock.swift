import DequeModule
import Synchronization

/// A first-come-first-served lock for async code. The SQLite engine has one connection, so a
/// transaction must keep every other statement out until it commits.
final class AsyncSerialLock: Sendable {
    private struct State {
        var locked = false
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
    }

    private let state = Mutex(State())

    func withLock<Result>(_ body: () async throws -> Result) async throws -> Result {
        await acquire()
        defer { release() }
        return try await body()
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let next = state.waiters.popFirst() { return next }
            state.locked = false
            return nil
        }
        next?.resume()
    }
}

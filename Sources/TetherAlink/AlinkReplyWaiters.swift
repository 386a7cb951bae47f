import Synchronization
import TetherCore

/// Requests waiting for their replies, by the request's `id`: what the device client and the
/// channel both keep. A waiter is registered before its request goes out, so that a fast reply
/// always finds it, and is removed when it is answered, times out or is cancelled.
final class AlinkReplyWaiters: Sendable {
    private struct State {
        var nextID: UInt64 = 1
        var waiting: [String: AsyncPromise<AlinkReply, TetherError>] = [:]
    }
    private let state = Mutex(State())

    /// A fresh id that nobody waits on (a request that expects no reply).
    func nextID() -> String {
        state.withLock { state in
            defer { state.nextID += 1 }
            return String(state.nextID)
        }
    }

    /// Registers a waiter under a fresh id, sends the request with `send(id)`, and waits for
    /// the reply with that id at most `timeout`. Cancellation ends the wait with `cancelled`.
    func request(
        timeout: Duration, describing what: String, _ send: (String) async throws(TetherError) -> Void
    ) async throws(TetherError) -> AlinkReply {
        let promise = AsyncPromise<AlinkReply, TetherError>()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            let id = String(state.nextID)
            state.waiting[id] = promise
            return id
        }
        defer { _ = state.withLock { $0.waiting.removeValue(forKey: id) } }
        try await send(id)
        let result = await withTaskCancellationHandler {
            await promise.result(within: timeout) { .failure(TetherError(.timeout, "no reply to \(what) (id \(id)) within \(timeout)")) }
        } onCancel: {
            promise.resolve(.failure(TetherError(.cancelled, "\(what) was cancelled")))
        }
        return try result.get()
    }

    /// Hands a reply to its waiter; false when nobody waits for its id.
    func resolve(_ reply: AlinkReply) -> Bool {
        guard let waiting = state.withLock({ $0.waiting[reply.id] }) else { return false }
        waiting.resolve(.success(reply))
        return true
    }

    /// Fails every waiter (the connection is closing).
    func failAll(_ error: TetherError) {
        let all = state.withLock { state in
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for promise in all { promise.resolve(.failure(error)) }
    }
}

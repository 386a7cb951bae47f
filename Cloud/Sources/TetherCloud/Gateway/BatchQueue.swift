import DequeModule
import Synchronization

/// Work waiting for the database (device messages, connections and disconnections): filled on
/// the brokers' event loops, drained in batches by one consumer so that many items share one
/// transaction. Bounded: beyond its capacity the newest items are refused (the caller counts
/// them), never memory.
final class BatchQueue<Element: Sendable>: Sendable {
    private struct State {
        var items = Deque<Element>()
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Adds an item; false when the queue is full or finished.
    func push(_ element: Element) -> Bool {
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !state.finished, state.items.count < capacity else { return (false, nil) }
            state.items.append(element)
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume()
        return accepted
    }

    /// Up to `maximum` items, in order, waiting for the first; nil once finished and empty,
    /// or when the task is cancelled.
    func next(maximum: Int) async -> [Element]? {
        while true {
            let batch = state.withLock { state -> [Element]? in
                guard !state.items.isEmpty else { return state.finished ? [] : nil }
                let count = min(maximum, state.items.count)
                defer { state.items.removeFirst(count) }
                return Array(state.items.prefix(count))
            }
            if let batch { return batch.isEmpty ? nil : batch }
            if Task.isCancelled { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Bool in
                        // Checked under the lock: a cancellation that came before this finds no
                        // waiter to resume, so it must be seen here.
                        guard state.items.isEmpty, !state.finished, !Task.isCancelled else { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }

    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}

import DequeModule
import Synchronization

/// A queue one task reads while others append: values wait in order until read, nothing is
/// dropped. Unlike `AsyncStream`, a reader that gives up (cancelled, timed out) ends only its own
/// wait, not the queue, so the next read continues where it stopped.
public final class AsyncQueue<Element: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Element?, Never>

    private struct State {
        var buffer: Deque<Element> = []
        var finished = false
        var waiter: (id: UInt64, continuation: Waiter)?
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Adds a value (ignored once finished).
    public func append(_ element: Element) {
        let waiter = state.withLock { state -> Waiter? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.buffer.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// No more values: reads return what is buffered, then nil.
    public func finish() {
        let waiter = state.withLock { state -> Waiter? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// The next value; nil once finished and empty, or when the reading task is cancelled.
    /// One reader at a time.
    public func next() async -> Element? {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let ready = state.withLock { state -> Element?? in
                    if let first = state.buffer.popFirst() { return .some(first) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    precondition(state.waiter == nil, "AsyncQueue has one reader at a time")
                    state.waiter = (id, waiter)
                    return .none
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}

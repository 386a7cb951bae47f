import Synchronization

/// Delivers each element to every current subscriber. Each subscriber has its own bounded
/// buffer, so a slow one loses its oldest elements instead of holding up the others or growing
/// without limit.
public final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
        var finished = false
    }

    private final class Subscriber: Sendable {
        let continuation: AsyncStream<Element>.Continuation
        /// What this subscriber sees of an element; nil: nothing.
        let transform: @Sendable (Element) -> Element?
        /// Set when its consumer stopped: it leaves the list at the next delivery. (Its
        /// termination must not take the broadcast's lock: a task being cancelled runs it while
        /// holding that task's own lock, which a delivery under the broadcast's lock may need to
        /// resume the task — each thread would wait for the other.)
        let terminated = Atomic<Bool>(false)

        init(continuation: AsyncStream<Element>.Continuation, transform: @escaping @Sendable (Element) -> Element?) {
            self.continuation = continuation
            self.transform = transform
        }

        func deliver(_ element: Element) {
            if let seen = transform(element) { continuation.yield(seen) }
        }
    }

    private let state = Mutex(State())
    private let bufferSize: Int

    /// A broadcast whose subscribers each keep at most `bufferSize` unread elements.
    public init(bufferSize: Int = 256) {
        self.bufferSize = bufferSize
    }

    /// A new stream of the elements yielded from now on. It ends when the broadcast finishes or
    /// the consumer stops iterating.
    public func subscribe() -> AsyncStream<Element> {
        subscribe(startingWith: [])
    }

    /// A new stream that starts with `prefix` (as it is), then has what `transform` makes of
    /// each element yielded from now on (nil: skipped). `onTermination` runs once, when the
    /// consumer stops iterating or the broadcast finishes.
    public func subscribe(
        startingWith prefix: [Element],
        bufferSize: Int? = nil,
        transform: @escaping @Sendable (Element) -> Element? = { $0 },
        onTermination: @escaping @Sendable () -> Void = {}
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferSize ?? self.bufferSize))
        for element in prefix { continuation.yield(element) }
        let subscriber = Subscriber(continuation: continuation, transform: transform)
        let subscribed: Bool = state.withLock { state in
            guard !state.finished else { return false }
            state.subscribers[state.nextID] = subscriber
            state.nextID += 1
            return true
        }
        guard subscribed else {
            continuation.finish()
            onTermination()
            return stream
        }
        continuation.onTermination = { _ in
            subscriber.terminated.store(true, ordering: .releasing)
            onTermination()
        }
        return stream
    }

    /// Delivers under the lock, so that elements yielded concurrently reach every subscriber in
    /// the same order; subscribers whose consumer stopped leave here.
    public func yield(_ element: Element) {
        state.withLock { state in
            for (id, subscriber) in state.subscribers {
                if subscriber.terminated.load(ordering: .acquiring) {
                    state.subscribers[id] = nil
                } else {
                    subscriber.deliver(element)
                }
            }
        }
    }

    /// How many streams are subscribed now; streams leave when their consumer stops iterating.
    public var subscriberCount: Int { state.withLock { $0.subscribers.values.filter { !$0.terminated.load(ordering: .acquiring) }.count } }

    /// Ends every stream; later subscribers get an empty stream.
    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}

import Synchronization

/// Work a scoped resource starts and does not wait for (a device's subscription, a model
/// fetched in the background), run as children of the resource's scope instead of as loose
/// tasks: ``run()`` is one child of the scope's task group, and when the scope ends every
/// started operation is cancelled and awaited. One operation can also be cancelled on its own,
/// through its ``Handle``.
///
/// An operation started after the scope ended does not run: its handle is done, and its
/// `ifNotRun` is called instead, so that whoever waits for what it would have done can be told.
public final class TaskScope: Sendable {
    /// One started operation.
    public final class Handle: Sendable {
        fileprivate let stop = AsyncPromise<Void, Never>()
        fileprivate let done = AsyncPromise<Void, Never>()

        /// Cancels the operation (whether it has started yet or not).
        public func cancel() { stop.resolve(.success(())) }

        /// Waits until the operation has ended, or did not run because the scope ended. A
        /// cancelled waiter stops waiting (the operation goes on).
        public func wait() async { _ = await done.result(ifCancelled: { .success(()) }) }

        /// Whether the operation has ended.
        public var isDone: Bool { done.isResolved }
    }

    private struct Job: Sendable {
        var operation: @Sendable () async -> Void
        var ifNotRun: @Sendable () -> Void
        var handle: Handle

        func skip() {
            ifNotRun()
            handle.done.resolve(.success(()))
        }
    }

    private struct State {
        var ended = false
        /// Started and not yet picked up by ``run()``.
        var waiting: [ObjectIdentifier: Job] = [:]
    }

    private let state = Mutex(State())
    private let jobs: (stream: AsyncStream<Job>, continuation: AsyncStream<Job>.Continuation)

    public init() {
        jobs = AsyncStream.makeStream(of: Job.self)
    }

    /// Starts `operation` as a child of the scope; when the scope has ended (or ends before the
    /// operation starts), calls `ifNotRun` instead.
    @discardableResult
    public func start(ifNotRun: @escaping @Sendable () -> Void = {}, _ operation: @escaping @Sendable () async -> Void) -> Handle {
        let job = Job(operation: operation, ifNotRun: ifNotRun, handle: Handle())
        let accepted = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.waiting[ObjectIdentifier(job.handle)] = job
            return true
        }
        guard accepted else {
            job.skip()
            return job.handle
        }
        jobs.continuation.yield(job)
        return job.handle
    }

    /// Runs what is started until cancelled; then cancels every operation, waits for them all,
    /// and refuses new ones. Run it once, as a child of the scope.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs.stream {
                _ = state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(job.handle)) }
                group.addTask { await Self.perform(job) }
            }
        }
        let unstarted = state.withLock { state -> [Job] in
            state.ended = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        jobs.continuation.finish()
        for job in unstarted { job.skip() }
    }

    /// The operation until it ends, its handle is cancelled, or the scope is.
    private static func perform(_ job: Job) async {
        await withTaskGroup(of: Void.self) { race in
            race.addTask { await job.operation() }
            race.addTask { _ = await job.handle.stop.result(ifCancelled: { .success(()) }) }
            await race.next()
            race.cancelAll()
        }
        job.handle.done.resolve(.success(()))
    }
}

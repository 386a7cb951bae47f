import Synchronization

/// A lock stored inside the object it guards. `NIOLock` is a separate allocation of its own
/// (about 60 bytes with the allocator's overhead); the broker keeps one lock per session, so
/// thousands of idle clients would pay for it.
struct InlineLock: ~Copyable, Sendable {
    private let mutex = Mutex<Void>(())

    init() {}

    func withLock<Result: Sendable>(_ body: () -> Result) -> Result {
        mutex.withLock { _ in body() }
    }
}

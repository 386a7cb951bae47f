import Synchronization
import Testing
import TetherCore

@Suite("TaskScope")
struct TaskScopeTests {
    @Test("a started operation runs; cancelling its handle ends it and wait() returns after it ended")
    func cancelOne() async {
        let scope = TaskScope()
        let ran = AsyncPromise<Void, Never>()
        let ended = Mutex(false)
        await withDiscardingTaskGroup { group in
            group.addTask { await scope.run() }
            let handle = scope.start {
                ran.resolve(.success(()))
                // Until cancelled.
                _ = await AsyncPromise<Void, Never>().result(ifCancelled: { .success(()) })
                ended.withLock { $0 = true }
            }
            _ = await ran.result(ifCancelled: { .success(()) })
            #expect(!handle.isDone)
            handle.cancel()
            await handle.wait()
            #expect(handle.isDone)
            let hasEnded = ended.withLock { $0 }
            #expect(hasEnded, "wait() returns only after the operation has ended")
            group.cancelAll()
        }
    }

    @Test("when the scope ends, every running operation is cancelled and awaited, and later ones do not run")
    func scopeEnds() async {
        let scope = TaskScope()
        let endedCount = Mutex(0)
        let started = (0..<3).map { _ in AsyncPromise<Void, Never>() }
        var handles: [TaskScope.Handle] = []
        await withDiscardingTaskGroup { group in
            group.addTask { await scope.run() }
            for promise in started {
                handles.append(scope.start {
                    promise.resolve(.success(()))
                    _ = await AsyncPromise<Void, Never>().result(ifCancelled: { .success(()) })
                    endedCount.withLock { $0 += 1 }
                })
            }
            for promise in started { _ = await promise.result(ifCancelled: { .success(()) }) }
            group.cancelAll()
        }
        let count = endedCount.withLock { $0 }
        #expect(count == 3, "the scope returned only after its operations ended")
        #expect(handles.allSatisfy { $0.isDone })

        let skipped = Mutex(false)
        let late = scope.start(ifNotRun: { skipped.withLock { $0 = true } }) {
            Issue.record("an operation started after the scope ended ran")
        }
        #expect(late.isDone)
        let told = skipped.withLock { $0 }
        #expect(told, "whoever started it is told it will not run")
    }

    @Test("a waiter that is cancelled stops waiting; the operation goes on")
    func cancelledWaiter() async {
        let scope = TaskScope()
        let release = AsyncPromise<Void, Never>()
        await withDiscardingTaskGroup { group in
            group.addTask { await scope.run() }
            let handle = scope.start { _ = await release.result(ifCancelled: { .success(()) }) }
            let waiter = Task { await handle.wait() }
            waiter.cancel()
            await waiter.value
            #expect(!handle.isDone)
            release.resolve(.success(()))
            await handle.wait()
            #expect(handle.isDone)
            group.cancelAll()
        }
    }
}

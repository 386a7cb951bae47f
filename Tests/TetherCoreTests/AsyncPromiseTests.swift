import Testing
import TetherCore

@Suite("AsyncPromise")
struct AsyncPromiseTests {
    @Test("a promise nobody resolves in time takes the fallback, for every waiter")
    func fallback() async {
        let promise = AsyncPromise<Int, Never>()
        async let other = promise.result(ifCancelled: { .success(-2) })
        let first = await promise.result(within: .milliseconds(20)) { .success(-1) }
        #expect(first == .success(-1))
        #expect(await other == .success(-1))
        promise.resolve(.success(7))
        #expect(await promise.result(ifCancelled: { .success(-2) }) == .success(-1), "the first resolution wins")
    }

    @Test("a result that comes in time is the one returned")
    func inTime() async {
        let promise = AsyncPromise<Int, Never>()
        promise.resolve(.success(5))
        #expect(await promise.result(within: .seconds(60)) { .success(-1) } == .success(5))
    }

    @Test("a cancelled waiter stops at once with its own result; the others still wait")
    func cancellation() async throws {
        let promise = AsyncPromise<Int, TetherError>()
        let cancelled = Task { try await promise.value(ifCancelled: { TetherError(.cancelled, "gave up") }) }
        let timed = Task { await promise.result(within: .seconds(600)) { .success(-1) } }
        let patient = Task { await promise.result(ifCancelled: { .success(-3) }) }
        // Whether each waiter is registered yet or not, cancelling it ends its wait.
        cancelled.cancel()
        timed.cancel()
        await #expect(throws: TetherError.self) { try await cancelled.value }
        #expect(await timed.value == .success(-1), "a cancelled timed wait gets the fallback without waiting")
        #expect(!promise.isResolved, "cancelling a waiter resolves nothing for the others")
        promise.resolve(.success(9))
        #expect(await patient.value == .success(9))
    }

    @Test("a task cancelled before it waits does not wait")
    func cancelledBeforeWaiting() async {
        let promise = AsyncPromise<Int, Never>()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await promise.result(ifCancelled: { .success(-4) })
        }
        #expect(await task.value == .success(-4))
    }
}

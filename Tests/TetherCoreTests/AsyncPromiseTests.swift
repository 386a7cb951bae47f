import Testing
import TetherCore

@Suite("AsyncPromise")
struct AsyncPromiseTests {
    @Test("a promise nobody resolves in time takes the fallback, for every waiter")
    func fallback() async {
        let promise = AsyncPromise<Int, Never>()
        async let other = promise.result()
        let first = await promise.result(within: .milliseconds(20)) { .success(-1) }
        #expect(first == .success(-1))
        #expect(await other == .success(-1))
        promise.resolve(.success(7))
        #expect(await promise.value() == -1, "the first resolution wins")
    }

    @Test("a result that comes in time is the one returned")
    func inTime() async {
        let promise = AsyncPromise<Int, Never>()
        promise.resolve(.success(5))
        #expect(await promise.result(within: .seconds(60)) { .success(-1) } == .success(5))
    }
}

import Testing
import TetherCore

@Suite("Broadcast")
struct BroadcastTests {
    @Test("every subscriber gets every element in order; a stopped consumer leaves at the next delivery")
    func delivery() async throws {
        let broadcast = Broadcast<Int>(bufferSize: 16)
        let first = broadcast.subscribe()
        let second = broadcast.subscribe()
        for value in 1...3 { broadcast.yield(value) }
        broadcast.finish()
        var seen: [[Int]] = []
        for stream in [first, second] {
            var values: [Int] = []
            for await value in stream { values.append(value) }
            seen.append(values)
        }
        #expect(seen == [[1, 2, 3], [1, 2, 3]])

        let live = Broadcast<Int>()
        let stream = live.subscribe()
        let consumer = Task { for await _ in stream {} }
        #expect(live.subscriberCount == 1)
        consumer.cancel()
        _ = await consumer.value
        #expect(live.subscriberCount == 0)
        live.yield(1)
        #expect(live.subscriberCount == 0)
    }

    /// Consumers cancelled while elements are delivered to them: a delivery resuming a task and
    /// that task's cancellation ending its stream once waited for each other's locks.
    @Test("consumers cancelled during deliveries never deadlock the broadcast (bounded)")
    func cancellationDuringDelivery() async throws {
        let broadcast = Broadcast<Int>(bufferSize: 4)
        await withTaskGroup(of: Void.self) { producers in
            producers.addTask {
                for value in 0..<20_000 {
                    broadcast.yield(value)
                    if value % 64 == 0 { await Task.yield() }
                }
            }
            producers.addTask {
                for _ in 0..<300 {
                    let stream = broadcast.subscribe()
                    let consumer = Task { for await _ in stream {} }
                    await Task.yield()
                    consumer.cancel()
                    _ = await consumer.value
                }
            }
        }
        broadcast.finish()
        #expect(broadcast.subscriberCount == 0)
    }
}

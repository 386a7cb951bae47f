import Synchronization
import TetherCore

/// The live values of one DIoT data channel (`D001`–`D009`, ble-profiles.md B6), decoded from its
/// notifications as they arrive: the features mapped to the channel, as often as its rate says.
/// A notification of `00` (nothing mapped) yields nothing. It throws the codec's error for a
/// malformed notification and ends when the link does (cancel the iterating task to stop earlier);
/// notifications are turned off when it is dropped.
public struct DIoTDataStream: AsyncSequence, Sendable {
    public typealias Element = DIoTFeatureRecord

    /// The channel, 1…9.
    public let channel: UInt8
    let values: AsyncStream<[UInt8]>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var values: AsyncStream<[UInt8]>.AsyncIterator
        var pending: ArraySlice<DIoTFeatureRecord> = []

        public mutating func next() async throws -> DIoTFeatureRecord? {
            while pending.isEmpty {
                guard let value = await values.next() else { return nil }
                pending = try DIoTFeatureRecord.decodeChannelData(value)[...]
            }
            return pending.popFirst()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(values: values.makeAsyncIterator())
    }
}

/// The battery levels a DIoT sensor notifies on `2A19` from now on (read
/// ``DIoTDevice/battery()`` for the current one). It throws `malformedFrame` for a value that is
/// not one byte of 0…100 and ends with the device's scope or the link.
public struct DIoTBatteryStream: AsyncSequence, Sendable {
    public typealias Element = DIoTBatteryLevel

    let values: AsyncStream<[UInt8]>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var values: AsyncStream<[UInt8]>.AsyncIterator

        public mutating func next() async throws -> DIoTBatteryLevel? {
            guard let value = await values.next() else { return nil }
            return try DIoTBatteryLevel(decoding: value)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(values: values.makeAsyncIterator())
    }
}

/// Hands the `2A19` notifications, turned on once for the device's scope, to every
/// ``DIoTBatteryStream`` open at the time (BlueZ refuses a second `StartNotify` from one client).
final class DIoTBatteryFeed: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<[UInt8]>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())

    /// The notifications from now on.
    func subscribe() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let id = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ value: [UInt8]) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield(value) }
    }

    /// No more notifications: the streams end.
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}

import TetherCore

/// The beacon records of one storage upload, decoded from `AA04` notifications as they arrive.
/// It ends after the device's summary frame, or when the link does (cancel the iterating task
/// to stop waiting earlier); it throws `timeout` when no frame comes for `idleTimeout`, as a
/// device that stopped uploading without a summary would otherwise leave it waiting forever.
public struct LW003RecordStream: AsyncSequence, Sendable {
    public typealias Element = LW003BeaconRecord

    let values: AsyncStream<[UInt8]>
    let idleTimeout: Duration

    public struct AsyncIterator: AsyncIteratorProtocol {
        let values: AsyncStream<[UInt8]>
        let idleTimeout: Duration
        var pending: [LW003BeaconRecord] = []
        var received = 0
        var done = false

        public mutating func next() async throws -> LW003BeaconRecord? {
            while pending.isEmpty {
                guard !done else { return nil }
                let values = values
                // AsyncStream's iterators share one buffer, so a fresh one per frame reads on.
                let arrival = await within(idleTimeout) { () async -> Arrival? in
                    var iterator = values.makeAsyncIterator()
                    return Arrival(value: await iterator.next())
                }
                guard let arrival else {
                    if Task.isCancelled { return nil }
                    done = true
                    throw TetherError(.timeout, "no LW003 storage frame within \(idleTimeout) (\(received) records so far, no summary)")
                }
                guard let value = arrival.value else { return nil }
                switch try LW003StorageFrame(decoding: value) {
                case .records(let records):
                    pending = records
                    received += records.count
                case .summary(let total):
                    done = true
                    guard Int(total) == received else {
                        throw TetherError(.unexpectedResponse, "the LW003 said it sent \(total) records, \(received) arrived")
                    }
                    return nil
                }
            }
            return pending.removeFirst()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(values: values, idleTimeout: idleTimeout)
    }

    /// A notification, or (nil) the end of the stream.
    struct Arrival: Sendable {
        var value: [UInt8]?
    }
}

/// The device's log as lines, assembled from `AA05` notifications; it ends when the link does.
/// A device logs only when something happens, so no silence is an error here: stop it by
/// cancelling the iterating task.
public struct LW003LogStream: AsyncSequence, Sendable {
    public typealias Element = String

    let values: AsyncStream<[UInt8]>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var values: AsyncStream<[UInt8]>.AsyncIterator
        var assembler = LW003LogAssembler()
        var lines: [String] = []

        public mutating func next() async -> String? {
            while lines.isEmpty {
                guard let value = await values.next() else { return nil }
                lines = assembler.append(value)
            }
            return lines.removeFirst()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(values: values.makeAsyncIterator())
    }
}

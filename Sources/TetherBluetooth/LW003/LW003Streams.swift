import TetherCore

/// The beacon records of one storage upload, decoded from `AA04` notifications as they arrive.
/// It ends after the device's summary frame, or when the link does (cancel the iterating task
/// to stop waiting earlier).
public struct LW003RecordStream: AsyncSequence, Sendable {
    public typealias Element = LW003BeaconRecord

    let values: AsyncStream<[UInt8]>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var values: AsyncStream<[UInt8]>.AsyncIterator
        var pending: [LW003BeaconRecord] = []
        var received = 0
        var done = false

        public mutating func next() async throws -> LW003BeaconRecord? {
            while pending.isEmpty {
                guard !done, let value = await values.next() else { return nil }
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
        AsyncIterator(values: values.makeAsyncIterator())
    }
}

/// The device's log as lines, assembled from `AA05` notifications; it ends when the link does.
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

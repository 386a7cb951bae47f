import NIOConcurrencyHelpers
import NIOCore

/// One timer per event loop that closes the connections of that loop whose clients went silent
/// for longer than their keep-alive allows. Cheaper per connection than a timer each: a
/// dictionary entry instead of a scheduled task and its promise. Used on its loop only.
final class KeepAliveSweeper {
    static let interval = TimeAmount.milliseconds(250)

    private let eventLoop: any EventLoop
    private var connections: [ObjectIdentifier: (handler: BrokerConnectionHandler, timeout: TimeAmount)] = [:]
    private var task: RepeatedTask?

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func watch(_ handler: BrokerConnectionHandler, timeout: TimeAmount) {
        eventLoop.preconditionInEventLoop()
        connections[ObjectIdentifier(handler)] = (handler, timeout)
        guard task == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        task = eventLoop.scheduleRepeatedTask(initialDelay: Self.interval, delay: Self.interval) { _ in bound.value.sweep() }
    }

    func forget(_ handler: BrokerConnectionHandler) {
        eventLoop.preconditionInEventLoop()
        connections[ObjectIdentifier(handler)] = nil
        if connections.isEmpty {
            task?.cancel()
            task = nil
            connections = [:]
        }
    }

    private func sweep() {
        let now = NIODeadline.now()
        var expired: [BrokerConnectionHandler] = []
        for (handler, timeout) in connections.values where now - handler.lastRead >= timeout {
            expired.append(handler)
        }
        // Closing calls back into forget(_:), so not while iterating.
        for handler in expired { handler.keepAliveExpired() }
    }
}

/// The sweepers of a broker, one per event loop, created on first use.
final class KeepAliveSweepers: Sendable {
    private let sweepers = NIOLockedValueBox<[ObjectIdentifier: NIOLoopBound<KeepAliveSweeper>]>([:])

    /// The sweeper of `eventLoop`; call on that loop.
    func sweeper(for eventLoop: any EventLoop) -> KeepAliveSweeper {
        sweepers.withLockedValue { sweepers in
            if let existing = sweepers[ObjectIdentifier(eventLoop)] { return existing.value }
            let sweeper = KeepAliveSweeper(eventLoop: eventLoop)
            sweepers[ObjectIdentifier(eventLoop)] = NIOLoopBound(sweeper, eventLoop: eventLoop)
            return sweeper
        }
    }
}

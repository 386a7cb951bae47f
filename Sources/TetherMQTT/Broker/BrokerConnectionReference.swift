import NIOCore
import Synchronization

/// A handle on a client connection that any thread may use: work is carried to the
/// connection's event loop, where its handler lives. One per connection, shared by its handler
/// and its session (a class, so that each holds a pointer rather than a copy).
///
/// It holds its handler, and the handler holds it until the handler leaves the pipeline: the
/// handler must let go then (``BrokerConnectionHandler/handlerRemoved(context:)``) or the two
/// keep each other alive after the connection closed.
final class BrokerConnectionReference: Sendable {
    let handler: NIOLoopBound<BrokerConnectionHandler>
    /// Whether reading is paused for a congested subscriber; readable from any thread, so that
    /// deliveries do not ask again while it is.
    let readingPaused = Atomic<Bool>(false)

    init(handler: NIOLoopBound<BrokerConnectionHandler>) {
        self.handler = handler
    }

    var eventLoop: any EventLoop { handler.eventLoop }

    /// Asks the connection to move what waits in its session's queue to the socket, as far as
    /// the socket takes it. Called once per batch of deliveries (the session remembers that a
    /// drain is pending), so that many deliveries from other loops cost one wake-up.
    func drain() {
        if eventLoop.inEventLoop {
            handler.value.drainSession()
        } else {
            let handler = self.handler
            eventLoop.execute { handler.value.drainSession() }
        }
    }

    /// Stops reading from the connection (its messages cannot be delivered fast enough).
    /// Returns false when it already was paused.
    @discardableResult
    func pauseReading() -> Bool {
        guard readingPaused.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return false }
        if eventLoop.inEventLoop {
            handler.value.pauseReading()
        } else {
            let handler = self.handler
            eventLoop.execute { handler.value.pauseReading() }
        }
        return true
    }

    /// Starts reading from the connection again after it was paused for a congested subscriber.
    func resumeReading() {
        let handler = self.handler
        eventLoop.execute { handler.value.resumeReading() }
    }

    /// Closes the connection, with a v5 DISCONNECT carrying `reason` first when given.
    func close(reason: MQTTReasonCode?) {
        let handler = self.handler
        eventLoop.execute { handler.value.close(reason: reason) }
    }

    func isSame(as other: BrokerConnectionReference?) -> Bool { other === self }
}

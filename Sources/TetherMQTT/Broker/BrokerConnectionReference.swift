import NIOCore

/// A handle on a client connection that any thread may use: work is carried to the
/// connection's event loop, where its handler lives.
struct BrokerConnectionReference: Sendable {
    let eventLoop: any EventLoop
    let handler: NIOLoopBound<BrokerConnectionHandler>
    let id: ObjectIdentifier

    func send(_ packets: [MQTTPacket]) {
        guard !packets.isEmpty else { return }
        if eventLoop.inEventLoop {
            handler.value.write(packets)
        } else {
            let handler = self.handler
            eventLoop.execute { handler.value.write(packets) }
        }
    }

    /// Closes the connection, with a v5 DISCONNECT carrying `reason` first when given.
    func close(reason: MQTTReasonCode?) {
        let handler = self.handler
        eventLoop.execute { handler.value.close(reason: reason) }
    }

    func isSame(as other: BrokerConnectionReference?) -> Bool { other?.id == id }
}

import NIOCore

/// Hands the broker's packets to the client and keeps the connection alive: a PINGREQ after
/// `keepAlive` without sending, and the connection closed when its PINGRESP does not come.
final class MQTTClientHandler: ChannelDuplexHandler {
    typealias InboundIn = MQTTPacket
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let onPacket: @Sendable (MQTTPacket) -> Void
    private let onClose: @Sendable ((any Error)?) -> Void
    private let pingTimeout: TimeAmount
    private var pingDeadline: Scheduled<Void>?
    private var error: (any Error)?

    init(pingTimeout: TimeAmount, onPacket: @escaping @Sendable (MQTTPacket) -> Void, onClose: @escaping @Sendable ((any Error)?) -> Void) {
        self.pingTimeout = pingTimeout
        self.onPacket = onPacket
        self.onClose = onClose
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let packet = unwrapInboundIn(data)
        if case .pingresp = packet {
            pingDeadline?.cancel()
            pingDeadline = nil
        }
        onPacket(packet)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .write else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard pingDeadline == nil else { return }
        var ping = context.channel.allocator.buffer(capacity: 2)
        ping.writeBytes([0xC0, 0x00])
        context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        pingDeadline = context.eventLoop.scheduleTask(in: pingTimeout) {
            handler.value.errorCaught(context: boundContext.value, error: MQTTError(.timeout, "no PINGRESP within the keep-alive"))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if self.error == nil { self.error = error }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pingDeadline?.cancel()
        onClose(error)
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension MQTTClientHandler: Sendable {}

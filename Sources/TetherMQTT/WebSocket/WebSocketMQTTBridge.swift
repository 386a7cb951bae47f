import NIOCore
import NIOWebSocket

/// Carries MQTT bytes in binary WebSocket frames (MQTT over WebSocket, MQTT 5.0 §6): frames in,
/// bytes out to the MQTT handlers; bytes in, frames out, masked when this side is the client.
final class WebSocketMQTTBridge: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    private let isClient: Bool

    init(isClient: Bool) {
        self.isClient = isClient
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary, .continuation:
            context.fireChannelRead(wrapInboundOut(frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: isClient ? .random() : nil, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        case .text:
            // MQTT travels in binary frames only (MQTT 5.0 §6).
            context.close(promise: nil)
        default:
            break
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: isClient ? .random() : nil, data: unwrapOutboundIn(data))
        context.write(wrapOutboundOut(frame), promise: promise)
    }
}

@available(*, unavailable)
extension WebSocketMQTTBridge: Sendable {}

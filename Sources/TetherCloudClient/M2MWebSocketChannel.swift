import NIOCore
import NIOWebSocket
import TetherWebSocketClient

/// The client side of a WebSocket for the M2M API: the HTTP upgrade of `/ws/app/v1`, then text
/// frames in both directions. Pings are answered; a close frame closes the channel.
enum M2MWebSocketChannel {
    /// Installs the upgrade on a new channel; the future succeeds once frames can flow, and
    /// `received` gets every text message.
    static func install(
        on channel: any Channel,
        host: String,
        port: Int,
        path: String,
        received: @escaping @Sendable (String) -> Void
    ) throws -> EventLoopFuture<Void> {
        try WebSocketClientUpgrade.install(
            on: channel, host: host, port: port, path: path,
            upgraded: { channel in try channel.pipeline.syncOperations.addHandler(TextFrameHandler(received: received)) },
            failure: { ChannelError.ioOnClosedChannel }
        )
    }

    /// Text frame out, for ``CloudRealtime``.
    static func frame(_ text: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        // Clients mask what they send (RFC 6455 §5.3).
        WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: allocator.buffer(string: text))
    }

    /// Reassembles text messages (fragments included), answers pings, closes on close.
    private final class TextFrameHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        let received: @Sendable (String) -> Void
        private var fragments: ByteBuffer?

        init(received: @escaping @Sendable (String) -> Void) { self.received = received }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text:
                if frame.fin {
                    received(String(buffer: frame.unmaskedData))
                } else {
                    fragments = frame.unmaskedData
                }
            case .continuation:
                var part = frame.unmaskedData
                guard fragments != nil else { return }
                fragments!.writeBuffer(&part)
                if frame.fin, let whole = fragments {
                    fragments = nil
                    received(String(buffer: whole))
                }
            case .ping:
                let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
                context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
            case .connectionClose:
                context.close(promise: nil)
            default:
                break
            }
        }
    }
}

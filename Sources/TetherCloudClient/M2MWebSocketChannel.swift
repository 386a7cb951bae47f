import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The client side of a WebSocket for the M2M API: the HTTP upgrade of `/ws/app/v1`, then text
/// frames in both directions. Pings are answered; a close frame closes the channel.
enum M2MWebSocketChannel {
    /// Installs the upgrade on a new channel. `upgraded` succeeds once frames can flow;
    /// `received` gets every text message.
    static func install(
        on channel: any Channel,
        host: String,
        port: Int,
        path: String,
        received: @escaping @Sendable (String) -> Void,
        upgraded: EventLoopPromise<Void>
    ) throws {
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: 1 << 20,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TextFrameHandler(received: received))
                    upgraded.succeed()
                }
            }
        )
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
        )
        try channel.pipeline.syncOperations.addHandler(UpgradeRequester(host: host, port: port, path: path))
        channel.closeFuture.whenComplete { _ in upgraded.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Text frame out, for ``M2MConnection``.
    static func frame(_ text: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        // Clients mask what they send (RFC 6455 §5.3).
        WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: allocator.buffer(string: text))
    }

    private final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        let host: String
        let port: Int
        let path: String

        init(host: String, port: Int, path: String) {
            self.host = host
            self.port = port
            self.path = path
        }

        func channelActive(context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: "\(host):\(port)")
            headers.add(name: "Content-Length", value: "0")
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
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

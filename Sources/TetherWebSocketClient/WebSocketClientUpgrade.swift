import NIOConcurrencyHelpers
package import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The client side of the HTTP/1.1 upgrade to a WebSocket, shared by the MQTT client's WebSocket
/// transport and the cloud's M2M connection.
package enum WebSocketClientUpgrade {
    /// Installs the upgrade on a new client channel: `GET path` when the channel becomes active
    /// (offering `subprotocol` when given); once the server agrees, `upgraded` adds the frame
    /// handlers and the returned future succeeds. If the channel closes first, the future fails
    /// with `failure()`.
    package static func install(
        on channel: any Channel,
        host: String,
        port: Int,
        path: String,
        subprotocol: String? = nil,
        maxFrameSize: Int = 1 << 20,
        upgraded: @escaping @Sendable (any Channel) throws -> Void,
        failure: @escaping @Sendable () -> any Error
    ) throws -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: maxFrameSize,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try upgraded(channel)
                    promise.succeed()
                }
            }
        )
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
        )
        try channel.pipeline.syncOperations.addHandler(UpgradeRequester(host: host, port: port, path: path, subprotocol: subprotocol))
        channel.closeFuture.whenComplete { _ in promise.fail(failure()) }
        return promise.futureResult
    }

    private final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        let host: String
        let port: Int
        let path: String
        let subprotocol: String?

        init(host: String, port: Int, path: String, subprotocol: String?) {
            self.host = host
            self.port = port
            self.path = path
            self.subprotocol = subprotocol
        }

        func channelActive(context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: "\(host):\(port)")
            if let subprotocol { headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
            headers.add(name: "Content-Length", value: "0")
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
    }
}

/// Hands a future made in a channel initializer (a layered transport's readiness) out to the
/// code that awaits the connection.
package final class ChannelFutureBox: Sendable {
    private let state = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)

    package init() {}

    package func set(_ future: EventLoopFuture<Void>) { state.withLockedValue { $0 = future } }

    package var future: EventLoopFuture<Void>? { state.withLockedValue { $0 } }
}

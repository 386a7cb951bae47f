import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The client side of the WebSocket upgrade: sends `GET path` offering the `mqtt` subprotocol
/// when the connection opens; once the server agrees, installs the frame bridge and the MQTT
/// handlers and succeeds `upgraded`.
enum WebSocketClientSetup {
    static func install(
        on channel: any Channel,
        host: String,
        port: Int,
        path: String,
        addMQTT: @escaping @Sendable (any Channel) throws -> Void
    ) throws -> EventLoopFuture<Void> {
        let upgraded = channel.eventLoop.makePromise(of: Void.self)
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: 1 << 20,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(WebSocketMQTTBridge(isClient: true))
                    try addMQTT(channel)
                    upgraded.succeed()
                }
            }
        )
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
        )
        try channel.pipeline.syncOperations.addHandler(UpgradeRequester(host: host, port: port, path: path))
        channel.closeFuture.whenComplete { _ in
            upgraded.fail(MQTTError(.connectFailed, "the server did not accept the WebSocket upgrade of \(path)"))
        }
        return upgraded.futureResult
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
            headers.add(name: "Sec-WebSocket-Protocol", value: "mqtt")
            headers.add(name: "Content-Length", value: "0")
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
    }
}

/// Hands the "ready for MQTT" future of a layered transport out of the channel initializer.
final class TransportReadiness: Sendable {
    private let state = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
    func set(_ future: EventLoopFuture<Void>) { state.withLockedValue { $0 = future } }
    var future: EventLoopFuture<Void>? { state.withLockedValue { $0 } }
}

import HTTPTypes
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// The cloud's HTTP server: Hummingbird's HTTP/1.1 with the WebSocket upgrade, inside the
/// ``HTTPConnectionGuard`` and ``HTTPEarlyErrorHandler``, with ``HTTPRequestDeadlineHandler``
/// on connections that stay HTTP.
struct GuardedChildChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let limits: HTTPLimits
    let counter: ConnectionCounter
    let exempt: Set<String>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(HTTPConnectionGuard(limits: limits, counter: counter, exempt: exempt))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(HTTPEarlyErrorHandler())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with a WebSocket upgrade, guarded by `limits` (``HTTPLimits``). Trusted proxies
    /// (`exempt`) are not held to the per-source connection limit.
    static func guardedHTTP1WebSocketUpgrade(
        limits: HTTPLimits,
        exempt: Set<String>,
        shouldUpgrade:
            @escaping @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
                WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
            >
    ) -> HTTPServerBuilder {
        let counter = ConnectionCounter(limit: limits.maximumConnectionsPerSource)
        let exempt = ClientSource.canonical(exempt)
        return HTTPServerBuilder { responder in
            var decoder = HTTP1Channel.Configuration.DecoderConfiguration()
            decoder.maxHeaderFieldSize = limits.maximumHeaderSize
            decoder.maxHeaderListSize = limits.maximumHeaderSize
            let http1 = HTTP1Channel.Configuration(
                additionalChannelHandlers: [HTTPRequestDeadlineHandler(limits: limits)],
                idleTimeout: nil,
                httpDecoderConfiguration: decoder
            )
            let inner = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: .init(http1: http1), shouldUpgrade: shouldUpgrade)
            return GuardedChildChannel(inner: inner, limits: limits, counter: counter, exempt: exempt)
        }
    }
}

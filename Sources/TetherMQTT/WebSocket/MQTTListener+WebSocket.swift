public import NIOCore
import NIOHTTP1
import NIOWebSocket

extension MQTTListener {
    /// MQTT over WebSocket (browsers, clients behind HTTP proxies): an HTTP/1.1 server that
    /// upgrades requests for `path` offering the `mqtt` subprotocol. `secure` installs TLS in
    /// front (wss), e.g. ``MQTTListener/tlsHandler(_:)``.
    public static func webSocket(
        host: String = "0.0.0.0", port: Int = 8080, path: String = "/mqtt", secure: (@Sendable (any Channel) throws -> Void)? = nil
    ) -> MQTTListener {
        MQTTListener(
            host: host, port: port,
            transport: .layered(isSecure: secure != nil) { channel, addMQTT in
                try secure?(channel)
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: 1 << 20,
                    shouldUpgrade: { channel, head in
                        let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }.map { String($0).webSocketTrimmed }
                        guard head.uri.split(separator: "?").first.map(String.init) == path, offered.contains("mqtt") else {
                            return channel.eventLoop.makeSucceededFuture(nil)
                        }
                        return channel.eventLoop.makeSucceededFuture(HTTPHeaders([("Sec-WebSocket-Protocol", "mqtt")]))
                    },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(WebSocketMQTTBridge(isClient: false))
                            try addMQTT(channel)
                        }
                    }
                )
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            })
    }
}

extension String {
    var webSocketTrimmed: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

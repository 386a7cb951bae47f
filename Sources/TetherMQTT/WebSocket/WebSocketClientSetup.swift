import NIOCore
import TetherWebSocketClient

/// The MQTT client's WebSocket transport: the upgrade offering the `mqtt` subprotocol; once the
/// server agrees, the frame bridge and the MQTT handlers.
enum WebSocketClientSetup {
    static func install(
        on channel: any Channel,
        host: String,
        port: Int,
        path: String,
        addMQTT: @escaping @Sendable (any Channel) throws -> Void
    ) throws -> EventLoopFuture<Void> {
        try WebSocketClientUpgrade.install(
            on: channel, host: host, port: port, path: path, subprotocol: "mqtt",
            upgraded: { channel in
                try channel.pipeline.syncOperations.addHandler(WebSocketMQTTBridge(isClient: true))
                try addMQTT(channel)
            },
            failure: { MQTTError(.connectFailed, "the server did not accept the WebSocket upgrade of \(path)") }
        )
    }
}

import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherCore
import TetherGizwitsLAN

typealias WebConfigConnection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
typealias WebConfigListener = NIOAsyncChannel<WebConfigConnection, Never>

/// GAgent's `web_config.cgi` (`shared/reference/gizwits-lan.md` §10.1): in SoftAP mode, a browser
/// (or an app) sends the credentials in a GET query; the device answers a small HTML page,
/// closes the connection, and joins as after `0x0001`.
extension LANDeviceServer {
    static let webConfigForm = """
        <html><body><form action="/web_config.cgi" method="get">SSID <input name="ssid"> Password <input name="pass">\
        <input type="submit"></form><p>Use only 0-9 a-z A-Z - _ .</p></body></html>
        """

    func bindWebConfig(port: Int) async throws -> WebConfigListener {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: configuration.host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try WebConfigConnection(wrappingChannelSynchronously: channel)
                }
            }
    }

    func serveWebConfig(_ listener: WebConfigListener) async throws {
        try await listener.executeThenClose { inbound in
            try await withThrowingDiscardingTaskGroup { connections in
                for try await connection in inbound {
                    connections.addTask { await self.serveWebConfig(connection) }
                }
            }
        }
    }

    /// One request, one answer, closed (`Connection: close`, as the firmware does).
    private func serveWebConfig(_ connection: WebConfigConnection) async {
        var credentials: GizwitsWebConfig?
        do {
            try await connection.executeThenClose { inbound, outbound in
                var target: String?
                for try await part in inbound {
                    if case .head(let head) = part { target = head.uri }
                    if case .end = part { break }
                }
                let accepted = device.isOnboarding ? target.flatMap(GizwitsWebConfig.init(target:)) : nil
                let page = accepted == nil ? Self.webConfigForm : "<html><body>Configuration saved; the device joins the network.</body></html>"
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "text/html")
                headers.add(name: "Content-Length", value: String(page.utf8.count))
                headers.add(name: "Connection", value: "close")
                try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(string: page))))
                try await outbound.write(.end(nil))
                credentials = accepted
            }
        } catch {
            logger.debug("web_config.cgi connection failed", metadata: ["tether.error": "\(error)"])
        }
        guard let credentials else { return }
        await join(ssid: credentials.ssid, key: credentials.password, pairingToken: credentials.pairingToken, through: nil)
    }
}

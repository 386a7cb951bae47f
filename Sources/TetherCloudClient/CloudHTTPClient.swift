import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TetherCore

/// One HTTP request to the cloud.
struct CloudHTTPRequest: Sendable {
    var method: HTTPMethod
    var path: String
    var headers: [(String, String)] = []
    var body: JSONValue?
    /// The deadline of this exchange when it is not the client's (a call that waits for a device).
    var timeout: Duration?
}

/// The cloud's answer: status and JSON body (nil for an empty body).
struct CloudHTTPResponse: Sendable {
    var status: Int
    var body: JSONValue?
    var text: String
}

/// A small HTTP/1.1 client on SwiftNIO for the Open API: one connection per request, JSON in
/// and out, bounded answers, a deadline for the whole exchange.
struct CloudHTTPClient: Sendable {
    static let maximumResponseSize = 4 << 20

    let endpoint: CloudEndpoint
    let timeout: Duration
    let group: any EventLoopGroup

    func send(_ request: CloudHTTPRequest) async throws(TetherError) -> CloudHTTPResponse {
        let endpoint = self.endpoint
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if endpoint.isSecure { try Self.addTLS(to: channel, host: endpoint.host) }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(HTTPExchangeHandler())
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: endpoint.host, port: endpoint.port).get()
        } catch let error as TetherError {
            throw error
        } catch {
            throw TetherError(.connectionFailed, "cannot reach the cloud at \(endpoint): \(error)")
        }
        let answer = channel.eventLoop.makePromise(of: CloudHTTPResponse.self)
        let timeout = request.timeout ?? self.timeout
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            answer.fail(TetherError(.timeout, "the cloud at \(endpoint) did not answer \(request.method) \(request.path) within \(timeout)"))
            channel.close(promise: nil)
        }
        var head = HTTPRequestHead(version: .http1_1, method: request.method, uri: endpoint.basePath + request.path)
        head.headers.add(name: "Host", value: endpoint.port == (endpoint.isSecure ? 443 : 80) ? endpoint.host : "\(endpoint.host):\(endpoint.port)")
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "Accept", value: "application/json")
        head.headers.add(name: "User-Agent", value: "Tether-SDK/" + TetherVersion.current)
        for (name, value) in request.headers { head.headers.add(name: name, value: value) }
        var body: ByteBuffer?
        if let json = request.body {
            body = ByteBuffer(string: json.serialized())
            head.headers.add(name: "Content-Type", value: "application/json")
        }
        head.headers.add(name: "Content-Length", value: String(body?.readableBytes ?? 0))
        let exchange = HTTPExchange(head: head, body: body, answer: answer)
        channel.pipeline.fireUserInboundEventTriggered(exchange)
        do {
            let response = try await answer.futureResult.get()
            deadline.cancel()
            return response
        } catch let error as TetherError {
            deadline.cancel()
            throw error
        } catch {
            deadline.cancel()
            throw TetherError(.connectionClosed, "the connection to \(endpoint) ended: \(error)")
        }
    }

    static func addTLS(to channel: any Channel, host: String) throws {
        let context = try NIOSSLContext(configuration: .makeClientConfiguration())
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host))
    }
}

/// What the exchange handler sends and where the answer goes.
final class HTTPExchange: Sendable {
    let head: HTTPRequestHead
    let body: ByteBuffer?
    let answer: EventLoopPromise<CloudHTTPResponse>

    init(head: HTTPRequestHead, body: ByteBuffer?, answer: EventLoopPromise<CloudHTTPResponse>) {
        self.head = head
        self.body = body
        self.answer = answer
    }
}

/// Sends one request when handed an ``HTTPExchange`` and collects the one answer.
final class HTTPExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPClientRequestPart

    private var exchange: HTTPExchange?
    private var status = 0
    private var body = ByteBuffer()

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let exchange = event as? HTTPExchange else { return context.fireUserInboundEventTriggered(event) }
        self.exchange = exchange
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(var part):
            guard body.readableBytes + part.readableBytes <= CloudHTTPClient.maximumResponseSize else {
                finish(
                    .failure(TetherError(.unexpectedCloudResponse, "the cloud's answer is larger than \(CloudHTTPClient.maximumResponseSize) bytes")),
                    context: context)
                return
            }
            body.writeBuffer(&part)
        case .end:
            let text = String(buffer: body)
            let json = body.readableBytes == 0 ? nil : try? JSONValue.parse(body.readableBytesView)
            finish(.success(CloudHTTPResponse(status: status, body: json, text: text)), context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(TetherError(.connectionClosed, "the connection to the cloud failed: \(error)")), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(TetherError(.connectionClosed, "the cloud closed the connection before answering")), context: context)
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<CloudHTTPResponse, TetherError>, context: ChannelHandlerContext) {
        guard let exchange else { return }
        self.exchange = nil
        exchange.answer.completeWith(result.mapError { $0 as any Error })
        context.close(promise: nil)
    }
}

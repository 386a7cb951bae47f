import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import TetherCore

/// One HTTP/1.1 connection kept for a sequence of requests, as ESP-IDF provisioning needs (the
/// device binds the security session to the connection). Requests go one at a time; the
/// device's `Set-Cookie` is sent back as `Cookie`.
final class HTTPKeepAliveConnection {
    struct Response {
        var statusCode: Int
        var body: [UInt8]
    }

    private var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    /// Closed when a request outlives its deadline, which ends the wait for its answer.
    private let channel: any Channel
    private let requestTimeout: Duration
    private let host: String
    private var cookie: String?
    let maximumBody: Int

    private init(
        inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>,
        channel: any Channel, requestTimeout: Duration, host: String, maximumBody: Int
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.channel = channel
        self.requestTimeout = requestTimeout
        self.host = host
        self.maximumBody = maximumBody
    }

    /// Connects, runs `body` with the connection, and closes it. `timeout` bounds connecting and
    /// each request.
    static func withConnection<Result>(
        host: String, port: Int, timeout: Duration, maximumBody: Int = 64 * 1024, _ body: (HTTPKeepAliveConnection) async throws(TetherError) -> Result
    ) async throws(TetherError) -> Result {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(timeout))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw TetherError(.connectionFailed, "cannot connect to \(host):\(port): \(error)")
        }
        var outcome: Swift.Result<Result, TetherError>?
        do {
            try await channel.executeThenClose { inbound, outbound in
                let connection = HTTPKeepAliveConnection(
                    inbound: inbound.makeAsyncIterator(), outbound: outbound, channel: channel.channel, requestTimeout: timeout, host: host,
                    maximumBody: maximumBody)
                do throws(TetherError) {
                    outcome = .success(try await body(connection))
                } catch {
                    outcome = .failure(error)
                }
            }
        } catch {
            if outcome == nil { outcome = .failure(TetherError(.connectionClosed, "the connection failed: \(error)")) }
        }
        guard let outcome else { throw TetherError(.connectionClosed, "the connection ended") }
        return try outcome.get()
    }

    /// POSTs `body` to `path` and returns the answer. Throws `connectionClosed` when the device
    /// drops the connection, `frameTooLarge` past the body limit.
    func post(_ path: String, body: [UInt8]) async throws(TetherError) -> Response {
        try await request(.POST, path, body: body)
    }

    /// GETs `path` (GAgent's `web_config.cgi`).
    func get(_ path: String) async throws(TetherError) -> Response {
        try await request(.GET, path, body: [])
    }

    private func request(_ method: HTTPMethod, _ path: String, body: [UInt8]) async throws(TetherError) -> Response {
        let channel = self.channel
        let expired = ExpiryFlag()
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(requestTimeout)) {
            expired.fire()
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        do {
            return try await exchange(method, path, body: body)
        } catch  where expired.fired {
            // The path only: web_config.cgi's query carries the password and the pairing token.
            throw TetherError(.timeout, "the device did not answer \(path.prefix { $0 != "?" }) within \(requestTimeout)")
        }
    }

    private func exchange(_ method: HTTPMethod, _ path: String, body: [UInt8]) async throws(TetherError) -> Response {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        if method == .POST {
            headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            headers.add(name: "Accept", value: "text/plain")
            headers.add(name: "Content-Length", value: String(body.count))
        }
        if let cookie { headers.add(name: "Cookie", value: cookie) }
        do {
            var parts: [HTTPClientRequestPart] = [.head(HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers))]
            if method == .POST { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            parts.append(.end(nil))
            try await outbound.write(contentsOf: parts)
        } catch {
            throw TetherError(.connectionClosed, "the device closed the connection: \(error)")
        }
        var status: HTTPResponseStatus?
        var received: [UInt8] = []
        while true {
            let part: HTTPClientResponsePart?
            do {
                part = try await inbound.next()
            } catch {
                throw TetherError(.connectionClosed, "the connection failed: \(error)")
            }
            switch part {
            case .head(let head)?:
                status = head.status
                if let setCookie = head.headers.first(name: "Set-Cookie") { cookie = setCookie.split(separator: ";").first.map(String.init) }
            case .body(var buffer)?:
                guard received.count + buffer.readableBytes <= maximumBody else { throw TetherError(.frameTooLarge, "an answer over \(maximumBody) bytes") }
                received += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end?:
                guard let status else { throw TetherError(.unexpectedResponse, "an HTTP answer without a status line") }
                return Response(statusCode: Int(status.code), body: received)
            case nil:
                throw TetherError(.connectionClosed, "the device closed the connection")
            }
        }
    }
}

private final class ExpiryFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func fire() { value.store(true, ordering: .relaxed) }
    var fired: Bool { value.load(ordering: .relaxed) }
}

import NIOCore
import NIOHTTP1

/// The first handler of every HTTP connection, on its bytes: it keeps one source to its share
/// of connections, and gives the first request head a deadline and a size limit, because
/// before the first head is read (and the WebSocket upgrade decided) no HTTP handler runs that
/// could time anything. Later requests are timed by ``HTTPRequestDeadlineHandler``.
///
/// It also answers for the handlers behind it: an ``HTTPConnectionGuard/Reject`` event sent
/// towards it is written out as a bare response and the connection closed.
final class HTTPConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Asks the guard to answer `status` and close: sent with `triggerUserOutboundEvent`.
    struct Reject: Sendable {
        var status: HTTPResponseStatus
    }

    private let limits: HTTPLimits
    private let counter: ConnectionCounter
    private let exempt: Set<String>
    private var scanner: RequestHeadScanner?
    private var deadline: Scheduled<Void>?
    private var countedSource: String?
    private var rejected = false

    init(limits: HTTPLimits, counter: ConnectionCounter, exempt: Set<String>) {
        self.limits = limits
        self.counter = counter
        self.exempt = exempt
        self.scanner = RequestHeadScanner(limit: limits.maximumHeaderSize)
    }

    func channelActive(context: ChannelHandlerContext) {
        let peer = context.channel.remoteAddress
        if let peer, let ip = ClientSource.canonicalIP(peer), !exempt.contains(ip) {
            let source = ClientSource.normalize(peer)
            guard counter.open(source) else {
                reject(context: context, .tooManyRequests)
                return
            }
            countedSource = source
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: .init(limits.headerTimeout)) {
            let (handler, context) = loopBound.value
            handler.reject(context: context, .requestTimeout)
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        if let countedSource { counter.close(countedSource) }
        countedSource = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !rejected else { return }
        guard var scanner else {
            context.fireChannelRead(data)
            return
        }
        let buffer = unwrapInboundIn(data)
        switch scanner.scan(buffer.readableBytesView) {
        case .needMore:
            self.scanner = scanner
            context.fireChannelRead(data)
        case .complete:
            self.scanner = nil
            deadline?.cancel()
            deadline = nil
            context.fireChannelRead(data)
        case .tooLarge:
            reject(context: context, .init(statusCode: 431, reasonPhrase: "Request Header Fields Too Large"))
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let reject = event as? Reject else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        self.reject(context: context, reject.status)
        promise?.succeed()
    }

    /// Writes a bare response and closes; whatever arrives afterwards is dropped.
    private func reject(context: ChannelHandlerContext, _ status: HTTPResponseStatus) {
        guard !rejected else { return }
        rejected = true
        scanner = nil
        deadline?.cancel()
        deadline = nil
        let text = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text))).whenComplete { _ in
            loopBound.value.close(promise: nil)
        }
    }
}

/// The last handler before the upgrade decision: a request the HTTP parser refuses before the
/// first head was handed on (a negative or doubled `Content-Length`, `Content-Length` beside
/// `Transfer-Encoding`, a malformed head) would otherwise reach no handler that answers it and
/// leave the connection open. It is answered 400 through the ``HTTPConnectionGuard``. Once
/// anything has passed, errors go on to the handlers that then exist.
final class HTTPEarlyErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private var passedAnything = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        passedAnything = true
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !passedAnything else {
            context.fireErrorCaught(error)
            return
        }
        context.triggerUserOutboundEvent(HTTPConnectionGuard.Reject(status: .badRequest), promise: nil)
    }
}

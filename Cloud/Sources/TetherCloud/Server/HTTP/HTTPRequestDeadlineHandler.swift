import NIOCore
import NIOHTTPTypes

/// Runs ``HTTPRequestDeadlines`` on a connection that stays HTTP: a body that does not arrive
/// in time, or a connection with nothing in progress for the idle timeout, is closed.
final class HTTPRequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: HTTPLimits
    private var deadlines = HTTPRequestDeadlines()
    private var timer: Scheduled<Void>?

    init(limits: HTTPLimits) { self.limits = limits }

    func handlerAdded(context: ChannelHandlerContext) {
        apply(deadlines.start(), context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: apply(deadlines.headReceived(), context: context)
        case .end: apply(deadlines.requestEnded(), context: context)
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { apply(deadlines.responseEnded(), context: context) }
        context.write(data, promise: promise)
    }

    private func apply(_ action: HTTPRequestDeadlines.Action, context: ChannelHandlerContext) {
        switch action {
        case .arm(let kind, let generation):
            timer?.cancel()
            let delay = kind == .body ? limits.bodyTimeout : limits.idleTimeout
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: .init(delay)) {
                let (handler, context) = loopBound.value
                handler.apply(handler.deadlines.timerFired(generation: generation), context: context)
            }
        case .cancel:
            timer?.cancel()
            timer = nil
        case .close:
            timer = nil
            context.close(promise: nil)
        case .none:
            break
        }
    }
}

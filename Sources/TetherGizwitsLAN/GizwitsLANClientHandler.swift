import NIOCore
import TetherCore

/// A request written to ``GizwitsLANClientHandler``: the message, and the promise that the
/// matching response (or an error) completes.
struct GizwitsLANRequest: Sendable {
    let message: GizwitsLANMessage
    let response: EventLoopPromise<GizwitsLANMessage>?
    let timeout: TimeAmount

    /// Which incoming message answers this request.
    var expectation: Expectation? {
        switch message {
        case .passcodeRequest: return .command(.passcodeResponse)
        case .login: return .command(.loginResult)
        case .hardwareInfoRequest: return .command(.hardwareInfo)
        case .hotspotListRequest: return .command(.hotspotList)
        case .heartbeat: return .command(.heartbeatReply)
        case .productionTestRequest: return .command(.productionTestAck)
        case .p0WithAck(let sn, _): return .ack(sn: sn)
        case .p0ToDevice(let p0) where p0.getInteger(at: p0.readerIndex, as: UInt8.self).map({ $0 & 0x0F == 0x02 }) == true:
            return .readReply
        default: return nil
        }
    }

    enum Expectation: Equatable {
        case command(GizwitsLANCommand)
        case ack(sn: UInt32)
        /// A `0x0091` carrying a read acknowledgement (P0 action 0x03 or 0x13).
        case readReply

        func matches(_ message: GizwitsLANMessage) -> Bool {
            switch (self, message) {
            case (.command(let command), _): return message.command == command
            case (.ack(let sn), .p0Ack(let answered, _)): return sn == answered
            case (.readReply, .p0FromDevice(let p0)):
                return p0.getInteger(at: p0.readerIndex, as: UInt8.self).map { $0 & 0x0F == 0x03 } ?? false
            default: return false
            }
        }
    }
}

/// The app side of a GAgent TCP connection: matches responses to the requests waiting for
/// them, fails them after their timeout or when the link drops, acknowledges the device's own
/// `0x0093` pushes, and hands every other message to `unsolicited`.
final class GizwitsLANClientHandler: ChannelDuplexHandler {
    typealias InboundIn = GizwitsLANFrame
    typealias OutboundIn = GizwitsLANRequest
    typealias OutboundOut = GizwitsLANFrame

    private struct Pending {
        let id: Int
        let expectation: GizwitsLANRequest.Expectation
        let promise: EventLoopPromise<GizwitsLANMessage>
        let timeout: Scheduled<Void>
    }

    private var pending: [Pending] = []
    private var nextID = 0
    private var failure: TetherError?
    private let unsolicited: AsyncStream<GizwitsLANMessage>.Continuation

    init(unsolicited: AsyncStream<GizwitsLANMessage>.Continuation) {
        self.unsolicited = unsolicited
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        if let failure {
            request.response?.fail(failure)
            promise?.fail(failure)
            return
        }
        if let response = request.response, let expectation = request.expectation {
            let id = nextID
            nextID += 1
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let timeout = context.eventLoop.scheduleTask(in: request.timeout) {
                loopBound.value.expire(id: id, command: request.message.command)
            }
            pending.append(Pending(id: id, expectation: expectation, promise: response, timeout: timeout))
        }
        context.write(wrapOutboundOut(request.message.frame), promise: promise)
    }

    private func expire(id: Int, command: GizwitsLANCommand) {
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return }
        let entry = pending.remove(at: index)
        entry.promise.fail(TetherError(.timeout, "the device did not answer \(command) in time"))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let message: GizwitsLANMessage
        do {
            message = try GizwitsLANMessage(frame: frame)
        } catch {
            fail(with: error, context: context)
            return
        }
        if let index = pending.firstIndex(where: { $0.expectation.matches(message) }) {
            let entry = pending.remove(at: index)
            entry.timeout.cancel()
            entry.promise.succeed(message)
            return
        }
        if case .p0WithAck(let sn, _) = message {
            // The device asks for an acknowledgement of its push: same sn, no P0.
            context.writeAndFlush(wrapOutboundOut(GizwitsLANMessage.p0Ack(sn: sn, p0: ByteBuffer()).frame), promise: nil)
        }
        unsolicited.yield(message)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason = (error as? TetherError) ?? TetherError(.connectionClosed, "connection error: \(error)")
        fail(with: reason, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(failure ?? TetherError(.connectionClosed, "the device closed the connection"))
        unsolicited.finish()
        context.fireChannelInactive()
    }

    private func fail(with error: TetherError, context: ChannelHandlerContext) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: TetherError) {
        if failure == nil { failure = error }
        let entries = pending
        pending = []
        for entry in entries {
            entry.timeout.cancel()
            entry.promise.fail(error)
        }
    }
}

@available(*, unavailable)
extension GizwitsLANClientHandler: Sendable {}

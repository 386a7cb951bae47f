import NIOCore
import TetherCore

/// A request written to ``TuyaClientHandler``: what to send, and the promise its answer (or an
/// error) completes.
struct TuyaClientRequest: Sendable {
    let command: TuyaCommand
    let payload: [UInt8]
    let response: EventLoopPromise<TuyaMessage>
    let timeout: TimeAmount
    /// False for commands without an answer of their own (`UPDATEDPS`): written, not waited for.
    var answered = true
}

/// Runs ``TuyaClientStateMachine`` on a channel: reads frames with the connection's codec (whose
/// key changes after the negotiation), writes what the machine says, times requests out, and
/// hands the device's pushes to `reports`.
final class TuyaClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = TuyaClientRequest
    typealias OutboundOut = ByteBuffer

    private var machine: TuyaClientStateMachine
    private var codec: TuyaCodec
    private var pending = ByteBuffer()
    /// Requests by id until their answer or failure; a cancelled request on the wire stays (done)
    /// until its answer, so that its deadline still closes a connection the device stopped answering.
    private var waiting: [Int: (promise: EventLoopPromise<TuyaMessage>, timeout: Scheduled<Void>?, done: Bool)] = [:]
    private var nextID = 0
    private let established: EventLoopPromise<Void>
    private let reports: AsyncStream<TuyaStatus>.Continuation
    private let problems: AsyncStream<TetherError>.Continuation

    init(
        codec: TuyaCodec, machine: TuyaClientStateMachine, established: EventLoopPromise<Void>, reports: AsyncStream<TuyaStatus>.Continuation,
        problems: AsyncStream<TetherError>.Continuation
    ) {
        self.codec = codec
        self.machine = machine
        self.established = established
        self.reports = reports
        self.problems = problems
    }

    func channelActive(context: ChannelHandlerContext) {
        run(machine.connected(), context: context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { run(machine.connected(), context: context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while context.channel.isActive {
            let message: TuyaMessage?
            do throws(TetherError) {
                message = try codec.decode(&pending)
            } catch {
                run(machine.failed(error), context: context)
                return
            }
            guard let message else { break }
            run(machine.received(message), context: context)
        }
        pending.discardReadBytes()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        guard request.answered else {
            let actions = machine.send(request.command, request.payload)
            guard !actions.isEmpty else {
                promise?.fail(TetherError(.connectionClosed, "the session is not open"))
                return
            }
            run(actions, context: context)
            promise?.succeed()
            return
        }
        let id = nextID
        nextID += 1
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let timeout = context.eventLoop.scheduleTask(in: request.timeout) {
            let (handler, context) = loopBound.value
            let error = TetherError(.timeout, "the device stopped answering: no answer to \(request.command) in time")
            handler.run(handler.machine.abandon(id, error: error, connectionIsSuspect: true), context: context)
        }
        waiting[id] = (request.response, timeout, false)
        request.response.futureResult.whenFailure { error in
            // The caller stopped waiting (cancelled): its answer, when it comes, goes nowhere.
            guard let error = error as? TetherError, error.code == .cancelled else { return }
            let (handler, context) = loopBound.value
            handler.run(handler.machine.abandon(id, error: error, connectionIsSuspect: false), context: context)
        }
        run(machine.request(.init(id: id, command: request.command, payload: request.payload)), context: context)
        promise?.succeed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        run(machine.closed(TetherError(.connectionClosed, "the device closed the connection (it may serve another client)")), context: context)
        finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        run(machine.failed(TetherError(.connectionClosed, "the connection failed: \(error)")), context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        run(machine.closed(TetherError(.connectionClosed, "the connection is closed")), context: context)
        finish()
    }

    private func finish() {
        reports.finish()
        problems.finish()
        established.fail(TetherError(.connectionClosed, "the connection closed before the session was established"))
    }

    private func run(_ actions: [TuyaClientStateMachine.Action], context: ChannelHandlerContext) {
        for action in actions {
            switch action {
            case .write(let message):
                do throws(TetherError) {
                    context.writeAndFlush(wrapOutboundOut(try codec.encode(message)), promise: nil)
                } catch {
                    run(machine.failed(error), context: context)
                }
            case .useKey(let key):
                codec.key = key
            case .established:
                established.succeed()
            case .answer(let id, let message):
                guard let entry = waiting.removeValue(forKey: id) else { break }
                entry.timeout?.cancel()
                if !entry.done { entry.promise.succeed(message) }
            case .fail(let id, let error):
                guard let entry = waiting.removeValue(forKey: id) else { break }
                entry.timeout?.cancel()
                if !entry.done { entry.promise.fail(error) }
            case .abandoned(let id, let error):
                guard let entry = waiting[id], !entry.done else { break }
                waiting[id]?.done = true
                entry.promise.fail(error)
            case .report(let status):
                reports.yield(status)
            case .unreadable(let error):
                problems.yield(error)
            case .close(let error):
                for entry in waiting.values { entry.timeout?.cancel() }
                waiting.removeAll()
                established.fail(error)
                problems.yield(error)
                context.close(promise: nil)
            }
        }
    }
}

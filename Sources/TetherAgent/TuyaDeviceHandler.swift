import Logging
import NIOCore
import TetherCore
import TetherTuyaLAN

/// Serves one Tuya client on its channel's event loop: frames in, the session's answers out,
/// without a hop between tasks per frame. Faults delay or drop what goes out.
final class TuyaDeviceHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let link: TuyaDeviceLink
    private let device: VirtualDevice
    private let client: String
    private let faults: TuyaFaultInjector
    private let logger: Logger
    private var pending = ByteBuffer()

    init(link: TuyaDeviceLink, device: VirtualDevice, client: String, faults: TuyaFaultInjector, logger: Logger) {
        self.link = link
        self.device = device
        self.client = client
        self.faults = faults
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        pending.writeBuffer(&chunk)
        do throws(TetherError) {
            while let message = try link.decode(&pending) {
                for action in link.receive(message, device: device, client: client) {
                    switch action {
                    case .send(let reply):
                        send(try link.encode(reply), context: context)
                    case .useKey(let key):
                        link.useKey(key)
                    case .close(let reason):
                        device.events.yield(.clientRefused(client, reason: reason))
                        context.close(promise: nil)
                        return
                    case .refuse(let error):
                        logger.notice("Tuya frame refused", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
                    }
                }
            }
        } catch {
            // A frame that does not open with the key (a wrong local key, a forgery): devices
            // drop the connection.
            logger.debug("Tuya client sent an unreadable frame", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
            context.close(promise: nil)
            return
        }
        pending.discardReadBytes()
    }

    private func send(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        guard let delay = faults.answer() else { return }
        guard delay > .zero else {
            context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
            return
        }
        let channel = context.channel
        context.eventLoop.scheduleTask(in: TimeAmount(delay)) { channel.writeAndFlush(frame, promise: nil) }
    }
}

import NIOCore
import NIOPosix
import TetherCore

// The floor under Tether's broker for memory per idle connection: a SwiftNIO server with the
// broker's channel options (its receive allocator too) and one handler that only answers
// CONNECT and PINGREQ. What an idle connection costs here is what SwiftNIO's channel costs
// (socket, pipeline, write queue, receive buffer) before any broker state. scripts/bench-mqtt.sh measures it beside mosquitto and Tether.
//
//   mqtt-idle-floor PORT

/// Answers the first packet (CONNECT) with a CONNACK of the client's protocol level, and
/// PINGREQ with PINGRESP; drops everything else.
final class IdleFloorHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var connected = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        var reply = context.channel.allocator.buffer(capacity: 5)
        if !connected {
            connected = true
            // Fixed header (1 byte + remaining length), protocol name ("MQTT", 6 bytes), level.
            var remainingLengthBytes = 1
            while remainingLengthBytes < 4, let byte = bytes.getInteger(at: bytes.readerIndex + remainingLengthBytes, as: UInt8.self), byte & 0x80 != 0 {
                remainingLengthBytes += 1
            }
            let level = bytes.getInteger(at: bytes.readerIndex + 1 + remainingLengthBytes + 6, as: UInt8.self)
            reply.writeBytes(level == 5 ? [0x20, 0x03, 0x00, 0x00, 0x00] : [0x20, 0x02, 0x00, 0x00])
        } else if bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == 0xC0 {
            reply.writeBytes([0xD0, 0x00])
        } else {
            return
        }
        context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
    }
}

@main
enum MQTTIdleFloor {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 2, let port = Int(arguments[1]) else {
            print("usage: mqtt-idle-floor PORT")
            return
        }
        // The same child options as MQTTBroker's listeners.
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(.recvAllocator, value: CompactRecvByteBufferAllocator(minimum: 64, initial: 64, maximum: 65_536))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleFloorHandler())
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
        print("listening on 127.0.0.1:\(port)")
        try await server.closeFuture.get()
    }
}

@available(*, unavailable)
extension IdleFloorHandler: Sendable {}

public import NIOCore
import NIOPosix
public import TetherGizwitsLAN

/// A UDP socket on loopback for tests that play the app's side of datagrams: it sends frames
/// and collects the GAgent messages that arrive.
public final class UDPTestSocket: Sendable {
    private let channel: any Channel
    public let messages: AsyncStream<(GizwitsLANMessage, SocketAddress)>
    public let port: Int

    public init(host: String = "127.0.0.1", port: Int = 0) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: (GizwitsLANMessage, SocketAddress).self)
        messages = stream
        channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(continuation: continuation))
                }
            }
            .bind(host: host, port: port)
            .get()
        self.port = channel.localAddress?.port ?? port
    }

    public func send(_ message: GizwitsLANMessage, to host: String, port: Int) async throws {
        let address = try SocketAddress(ipAddress: host, port: port)
        try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: message.frame.bytes))
    }

    public func close() async {
        try? await channel.close()
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let continuation: AsyncStream<(GizwitsLANMessage, SocketAddress)>.Continuation

        init(continuation: AsyncStream<(GizwitsLANMessage, SocketAddress)>.Continuation) {
            self.continuation = continuation
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            if let frame = try? GizwitsLANFrame.read(datagram: envelope.data), let message = try? GizwitsLANMessage(frame: frame) {
                continuation.yield((message, envelope.remoteAddress))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
        }
    }
}

/// A UDP port on 127.0.0.1 that was free a moment ago (the system's choice, released at once), for
/// tests where a peer must know a port before the code under test binds it. Better than a random
/// port, which may be one of the system's ephemeral ports in use.
public func freeUDPPort() async throws -> Int {
    let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
    let port = channel.localAddress?.port ?? 0
    try await channel.close()
    return port
}

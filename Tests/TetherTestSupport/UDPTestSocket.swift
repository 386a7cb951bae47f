public import NIOCore
import NIOPosix
import Synchronization
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

/// A UDP port on 127.0.0.1 for tests where a peer must know a port before the code under test
/// binds it: below the system's ephemeral range (32768 and up on Linux), so no outgoing socket
/// holds it, and never the same twice in one test process.
public func freeUDPPort() -> Int {
    20_000 + (testPortStart + testPortCounter.wrappingAdd(1, ordering: .relaxed).oldValue) % 10_000
}

private let testPortStart = Int.random(in: 0..<10_000)
private let testPortCounter = Atomic<Int>(0)

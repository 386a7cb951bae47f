import NIOCore
import NIOPosix
import Synchronization
@testable import TetherCloud

/// A TCP connection that sends whatever bytes a test wants, as slowly as it wants, and records
/// what comes back and when the server closed: how an attacker talks to a server.
final class RawHTTPConnection: Sendable {
    private let channel: any Channel
    private let collector: Collector

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    /// The client's own event loop, so that a busy server (on the singleton group) does not
    /// delay what the client sees.
    private static let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Connects to `127.0.0.1:port`, from `localAddress` (another loopback address plays
    /// another source).
    static func connect(port: Int, from localAddress: String? = nil) async throws -> RawHTTPConnection {
        let collector = Collector()
        var bootstrap = ClientBootstrap(group: clientGroup)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
        if let localAddress { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: localAddress, port: 0)) }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        return RawHTTPConnection(channel: channel, collector: collector)
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text))
    }

    /// Sends `text` a byte at a time, `interval` apart, until done or the server closes.
    func dribble(_ text: String, interval: Duration) async throws {
        for byte in text.utf8 {
            guard !collector.isClosed else { return }
            try? await channel.writeAndFlush(ByteBuffer(bytes: [byte]))
            try await Task.sleep(for: interval)
        }
    }

    /// Everything received so far.
    var received: String { collector.text }

    var isClosed: Bool { collector.isClosed }

    /// Waits until the server closes the connection: false when it stayed open through `timeout`.
    func waitForClose(timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !collector.isClosed {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// The status code of the first response received, if any.
    var status: Int? {
        let text = received
        guard text.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }

    func close() async {
        try? await channel.close()
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        private let state = Mutex<(text: String, closed: Bool)>(("", false))

        var text: String { state.withLock { $0.text } }
        var isClosed: Bool { state.withLock { $0.closed } }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            state.withLock { $0.text += String(buffer: buffer) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLock { $0.closed = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

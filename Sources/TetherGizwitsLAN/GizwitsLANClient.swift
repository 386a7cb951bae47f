public import NIOCore
import NIOPosix
public import TetherCore

/// A TCP connection from an app to a GAgent device (port 12416): request/response with
/// timeouts, and a stream of what the device sends on its own (status reports, transparent data).
///
/// ```swift
/// let client = try await GizwitsLANClient.connect(host: "192.168.1.20")
/// let reply = try await client.request(.login(passcode: passcode))
/// ```
public final class GizwitsLANClient: Sendable {
    /// Timeouts and the frame size limit of a connection.
    public struct Configuration: Sendable {
        /// How long ``GizwitsLANClient/connect(host:port:configuration:group:)`` waits for the TCP
        /// connection to be established.
        public var connectTimeout: Duration
        /// How long a request waits for its answer.
        public var requestTimeout: Duration
        /// Largest frame accepted from the device.
        public var maximumFrameLength: Int

        /// Defaults: 3 s to connect, 5 s per request, frames up to
        /// ``GizwitsLANFrame/defaultMaximumFrameLength``.
        public init(
            connectTimeout: Duration = .seconds(3), requestTimeout: Duration = .seconds(5), maximumFrameLength: Int = GizwitsLANFrame.defaultMaximumFrameLength
        ) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.maximumFrameLength = maximumFrameLength
        }
    }

    private let channel: any Channel
    /// The settings the connection was opened with.
    public let configuration: Configuration
    /// Messages no request was waiting for: `0x0091` reports, the device's `0x0093` pushes
    /// (already acknowledged), transparent data. Ends when the connection closes.
    public let unsolicited: AsyncStream<GizwitsLANMessage>
    /// The device as `host:port`, as given to ``connect(host:port:configuration:group:)``, for
    /// messages and logs.
    public let remoteDescription: String

    private init(channel: any Channel, configuration: Configuration, unsolicited: AsyncStream<GizwitsLANMessage>, remoteDescription: String) {
        self.channel = channel
        self.configuration = configuration
        self.unsolicited = unsolicited
        self.remoteDescription = remoteDescription
    }

    /// Opens the connection. Throws `TetherError.Code.connectionFailed` when the device cannot
    /// be reached (refused, unreachable, unknown host, or no answer within `connectTimeout`).
    public static func connect(
        host: String,
        port: Int = 12416,
        configuration: Configuration = .init(),
        group: (any EventLoopGroup)? = nil
    ) async throws(TetherError) -> GizwitsLANClient {
        let (stream, continuation) = AsyncStream.makeStream(of: GizwitsLANMessage.self, bufferingPolicy: .bufferingNewest(1024))
        let maximum = configuration.maximumFrameLength
        do {
            let channel = try await ClientBootstrap(group: group ?? MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            ByteToMessageHandler(GizwitsLANFrameDecoder(maximumLength: maximum)),
                            MessageToByteHandler(GizwitsLANFrameEncoder()),
                            GizwitsLANClientHandler(unsolicited: continuation),
                        ])
                    }
                }
                .connect(host: host, port: port)
                .get()
            return GizwitsLANClient(channel: channel, configuration: configuration, unsolicited: stream, remoteDescription: "\(host):\(port)")
        } catch {
            continuation.finish()
            throw TetherError(.connectionFailed, "cannot connect to \(host):\(port): \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case is ChannelError where "\(error)".contains("connectTimeout"): return "no answer in time"
        case let error as IOError: return error.description
        default: return "\(error)"
        }
    }

    /// Sends a request and waits for the message that answers it (see the reference for which
    /// command answers which). Throws `TetherError.Code.timeout`,
    /// `TetherError.Code.connectionClosed` or `TetherError.Code.cancelled`; it never waits
    /// longer than its timeout, even when the connection is already gone.
    public func request(_ message: GizwitsLANMessage, timeout: Duration? = nil) async throws(TetherError) -> GizwitsLANMessage {
        let timeout = timeout ?? configuration.requestTimeout
        let promise = channel.eventLoop.makePromise(of: GizwitsLANMessage.self)
        let request = GizwitsLANRequest(message: message, response: promise, timeout: TimeAmount(timeout))
        guard request.expectation != nil else {
            promise.fail(TetherError(.invalidArgument, "\(message.command) has no answer to wait for"))
            throw TetherError(.invalidArgument, "\(message.command) has no answer to wait for")
        }
        // The handler times requests out, but it is gone once the channel closes: a write that
        // fails, and a deadline of our own, complete the promise then. The first completion wins.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { error in
            promise.fail((error as? TetherError) ?? TetherError(.connectionClosed, "the connection to the device is closed"))
        }
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(timeout + .milliseconds(100))) {
            promise.fail(TetherError(.timeout, "the device did not answer \(message.command) in time"))
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        channel.writeAndFlush(request, promise: written)
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(TetherError(.cancelled, "the request was cancelled"))
            }
        } catch let error as TetherError {
            throw error
        } catch {
            throw TetherError(.connectionClosed, "\(error)")
        }
    }

    /// Sends a message that has no answer.
    public func send(_ message: GizwitsLANMessage) async throws(TetherError) {
        do {
            try await channel.writeAndFlush(GizwitsLANRequest(message: message, response: nil, timeout: .zero)).get()
        } catch let error as TetherError {
            throw error
        } catch {
            throw TetherError(.connectionClosed, "cannot send to \(remoteDescription): \(error)")
        }
    }

    /// Whether the connection is still open.
    public var isActive: Bool { channel.isActive }

    /// Closes the connection. Requests still waiting fail with `TetherError.Code.connectionClosed`
    /// and ``unsolicited`` ends.
    public func close() async {
        try? await channel.close()
    }

    /// Waits until the connection is closed, by either side.
    public func closed() async {
        try? await channel.closeFuture.get()
    }
}

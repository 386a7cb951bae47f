public import NIOCore
import NIOPosix
public import TetherCore
import Foundation

/// A connection from an app to a Tuya device: negotiated on 3.4/3.5, requests answered in turn
/// with timeouts, and the device's own `STATUS` pushes as ``reports``. Devices serve one client
/// at a time: hold one connection per device and close it when done
/// (``TuyaLANClient/withConnection(to:timeout:_:)`` for a single exchange).
///
/// ```swift
/// let session = try await TuyaLANSession.connect(to: address)
/// let status = try await session.status()
/// try await session.set(["1": .bool(false)])
/// ```
public final class TuyaLANSession: Sendable {
    /// Timeouts and the frame size limit of a connection.
    public struct Configuration: Sendable {
        /// How long ``TuyaLANSession/connect(to:configuration:group:)`` waits for the TCP
        /// connection and, on 3.4/3.5, the session key.
        public var connectTimeout: Duration
        /// How long a request waits for its answer. A device that does not answer in time is
        /// taken as gone: the connection closes.
        public var requestTimeout: Duration
        /// Largest frame accepted from the device.
        public var maximumFrameLength: Int

        public init(connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(5), maximumFrameLength: Int = 64 * 1024) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.maximumFrameLength = maximumFrameLength
        }
    }

    /// The device (its description leaves the key out).
    public let address: TuyaDeviceAddress
    public let configuration: Configuration
    /// Data points the device sent on its own (`STATUS` pushes, answers to ``refresh(_:)``).
    /// Ends when the connection closes.
    public let reports: AsyncStream<TuyaStatus>
    /// Frames that could not be read, and why the connection closed. Ends when it closes.
    public let problems: AsyncStream<TetherError>
    private let channel: any Channel

    private init(
        address: TuyaDeviceAddress, configuration: Configuration, channel: any Channel, reports: AsyncStream<TuyaStatus>, problems: AsyncStream<TetherError>
    ) {
        self.address = address
        self.configuration = configuration
        self.channel = channel
        self.reports = reports
        self.problems = problems
    }

    /// Connects and, on 3.4/3.5, negotiates the session key. Throws
    /// `TetherError.Code.connectionFailed` (unreachable, or no TCP connection within
    /// `connectTimeout`), `TetherError.Code.sessionNegotiationFailed` (the device closed the
    /// connection or did not answer during the negotiation: most often a wrong local key, or a
    /// device busy with another client), or `TetherError.Code.cancelled`.
    public static func connect(
        to address: TuyaDeviceAddress, configuration: Configuration = .init(), group: (any EventLoopGroup)? = nil
    ) async throws(TetherError) -> TuyaLANSession {
        let codec = try TuyaCodec(version: address.version, key: address.localKey, sender: .app, maximumFrameLength: configuration.maximumFrameLength)
        let machine = TuyaClientStateMachine(version: address.version, localKey: address.localKey)
        let (reports, reportContinuation) = AsyncStream.makeStream(of: TuyaStatus.self, bufferingPolicy: .bufferingNewest(256))
        let (problems, problemContinuation) = AsyncStream.makeStream(of: TetherError.self, bufferingPolicy: .bufferingNewest(16))
        let loop = (group ?? MultiThreadedEventLoopGroup.singleton).next()
        let established = loop.makePromise(of: Void.self)
        let channel: any Channel
        do {
            // The handler joins the channel that connected, not in the initializer: a host with
            // several addresses makes one channel per attempt, and the losers must not touch the
            // winner's promise and streams.
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: address.host, port: address.port)
                .get()
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    TuyaClientHandler(codec: codec, machine: machine, established: established, reports: reportContinuation, problems: problemContinuation))
            }.get()
        } catch {
            established.fail(TetherError(.connectionFailed, "not connected"))
            reportContinuation.finish()
            problemContinuation.finish()
            throw TetherError(.connectionFailed, "cannot connect to \(address.host):\(address.port): \(error)")
        }
        let deadline = loop.scheduleTask(in: TimeAmount(configuration.connectTimeout)) {
            established.fail(TetherError(.sessionNegotiationFailed, "step 2: no SESS_KEY_NEG_RESP within \(configuration.connectTimeout)"))
        }
        defer { deadline.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await established.futureResult.get()
            } onCancel: {
                established.fail(TetherError(.cancelled, "cancelled while connecting"))
            }
        } catch {
            try? await channel.close()
            throw Self.tetherError(error, or: TetherError(.sessionNegotiationFailed, "the session was not established: \(error)"))
        }
        return TuyaLANSession(address: address, configuration: configuration, channel: channel, reports: reports, problems: problems)
    }

    /// Every data point, as the device reports them (DP ids as keys). With `dataPoints`, a
    /// device22 that refuses the standard query is asked for those ids instead (§6).
    public func status(dataPoints: [String] = []) async throws(TetherError) -> TuyaStatus {
        let (command, payload) = TuyaRequest.query(deviceID: address.deviceID, version: address.version, time: Self.now())
        let answer = try await request(command, payload, accepting: true)
        if Self.isDevice22Refusal(answer), !dataPoints.isEmpty {
            let (command, payload) = TuyaRequest.device22Query(dataPoints, deviceID: address.deviceID, time: Self.now())
            let answer = try await request(command, payload)
            return try TuyaStatus(parsing: answer.payload)
        }
        try Self.check(answer)
        return try TuyaStatus(parsing: answer.payload)
    }

    /// Sets data points (DP ids as keys). Returns the points as the device answered them, or,
    /// when it only acknowledged (some firmware answers empty and pushes `STATUS` after), nil.
    @discardableResult
    public func set(_ dps: JSONObject) async throws(TetherError) -> TuyaStatus? {
        let (command, payload) = TuyaRequest.control(dps, deviceID: address.deviceID, version: address.version, time: Self.now())
        let answer = try await request(command, payload)
        guard !answer.payload.isEmpty else { return nil }
        return try? TuyaStatus(parsing: answer.payload)
    }

    /// Keeps the connection alive (devices drop silent clients after about 30 s) and proves the
    /// device still answers.
    public func heartbeat() async throws(TetherError) {
        let (command, payload) = TuyaRequest.heartbeat(deviceID: address.deviceID)
        _ = try await request(command, payload)
    }

    /// Asks the device to report `ids` again (`UPDATEDPS`); the points arrive in ``reports``.
    public func refresh(_ ids: [Int]) async throws(TetherError) {
        let (command, payload) = TuyaRequest.updateDPS(ids)
        try await send(command, payload)
    }

    /// Whether the connection is still open.
    public var isActive: Bool { channel.isActive }

    /// Closes the connection; requests still waiting fail with `TetherError.Code.connectionClosed`.
    public func close() async {
        try? await channel.close()
    }

    /// Waits until the connection is closed, by either side. Cancelling the wait closes it, so
    /// that a task holding a connection ends with it.
    public func closed() async {
        let channel = self.channel
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    // MARK: The wire

    /// Sends one request and waits for the message with its command. Never waits past its
    /// timeout, even when the connection is already gone.
    func request(_ command: TuyaCommand, _ payload: [UInt8], accepting refusal: Bool = false) async throws(TetherError) -> TuyaMessage {
        let timeout = configuration.requestTimeout
        let promise = channel.eventLoop.makePromise(of: TuyaMessage.self)
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in promise.fail(TetherError(.connectionClosed, "the connection to \(self.address) is closed")) }
        // The handler times requests out, but is gone once the channel closes.
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(timeout + .milliseconds(100))) {
            promise.fail(TetherError(.timeout, "\(self.address) did not answer \(command) within \(timeout)"))
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        channel.writeAndFlush(TuyaClientRequest(command: command, payload: payload, response: promise, timeout: TimeAmount(timeout)), promise: written)
        let answer: TuyaMessage
        do {
            answer = try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(TetherError(.cancelled, "the request was cancelled"))
            }
        } catch {
            var error = Self.tetherError(error, or: TetherError(.connectionClosed, "\(error)"))
            if error.code == .timeout, !address.version.negotiatesSessionKey {
                error = TetherError(.timeout, error.message + " (a 3.1-3.3 device ignores requests sealed with another local key)")
            }
            throw error
        }
        if !refusal { try Self.check(answer) }
        return answer
    }

    private func send(_ command: TuyaCommand, _ payload: [UInt8]) async throws(TetherError) {
        // UPDATEDPS has no answer of its own: the points come as STATUS.
        let promise = channel.eventLoop.makePromise(of: TuyaMessage.self)
        promise.succeed(TuyaMessage(sequence: 0, command: command))
        do {
            try await channel.writeAndFlush(TuyaClientRequest(command: command, payload: payload, response: promise, timeout: .zero, answered: false))
        } catch {
            throw TetherError(.connectionClosed, "the connection to \(address) is closed")
        }
    }

    static func isDevice22Refusal(_ message: TuyaMessage) -> Bool {
        String(decoding: message.payload, as: UTF8.self).contains(TuyaStatus.device22Refusal)
    }

    private static func check(_ message: TuyaMessage) throws(TetherError) {
        if let code = message.returnCode, code != 0 {
            let text = String(decoding: message.payload, as: UTF8.self)
            throw TetherError(.unexpectedResponse, "the device answered \(message.command) with return code \(code)\(text.isEmpty ? "" : ": \(text)")")
        }
    }

    private static func tetherError(_ error: any Error, or fallback: TetherError) -> TetherError {
        (error as? TetherError) ?? fallback
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}

/// Single exchanges with Tuya devices.
public enum TuyaLANClient {
    /// Connects, negotiates, runs `body` and closes. `timeout` bounds connecting and each request.
    public static func withConnection<Result>(
        to address: TuyaDeviceAddress, timeout: Duration = .seconds(5), _ body: (TuyaLANSession) async throws(TetherError) -> Result
    ) async throws(TetherError) -> Result {
        let session = try await TuyaLANSession.connect(to: address, configuration: .init(connectTimeout: timeout, requestTimeout: timeout))
        do {
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }
}

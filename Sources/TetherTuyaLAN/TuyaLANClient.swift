import NIOCore
import NIOPosix
public import TetherCore
import Foundation
import Synchronization

/// Where a Tuya device is and what it takes: its address, id, local key and protocol version.
public struct TuyaDeviceAddress: Sendable, Hashable {
    public var host: String
    /// The device's TCP port (6668).
    public var port: Int
    /// `gwId` / `devId`: 20 or 22 characters.
    public var deviceID: String
    /// The 16-byte local key. A secret: never logged.
    public var localKey: [UInt8]
    public var version: TuyaVersion

    public init(host: String, port: Int = 6668, deviceID: String, localKey: [UInt8], version: TuyaVersion) throws(TetherError) {
        try TuyaCrypto.checkKey(localKey)
        guard !deviceID.isEmpty, deviceID.utf8.count <= 64 else { throw TetherError(.invalidArgument, "a Tuya device id is 1 to 64 characters") }
        self.host = host
        self.port = port
        self.deviceID = deviceID
        self.localKey = localKey
        self.version = version
    }
}

/// The app's side of one TCP connection to a Tuya device, as tinytuya uses it: connect, negotiate
/// the session key on 3.4/3.5, then requests one at a time. Devices serve one client at a time,
/// so a connection is a scoped resource (``withConnection(to:timeout:_:)``) that is closed when
/// its work is done.
public final class TuyaConnection {
    let address: TuyaDeviceAddress
    private var codec: TuyaCodec
    private var pending = ByteBuffer()
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var sequence: UInt32 = 0
    private let clock: @Sendable () -> Int64

    init(
        address: TuyaDeviceAddress, inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) throws(TetherError) {
        self.address = address
        self.codec = try TuyaCodec(version: address.version, key: address.localKey, sender: .app)
        self.inbound = inbound
        self.outbound = outbound
        self.clock = { Int64(Date().timeIntervalSince1970) }
    }

    /// Every data point, as the device reports them (DP ids as keys).
    public func status() async throws(TetherError) -> TuyaStatus {
        let (command, payload) = TuyaRequest.query(deviceID: address.deviceID, version: address.version, time: clock())
        try await send(command, payload)
        // The answer carries the request's command; pushes that were already on their way
        // (STATUS after an earlier write) are not it.
        while true {
            let message = try await receive()
            guard message.command == command else { continue }
            try Self.check(message)
            guard !message.payload.isEmpty else { continue }
            return try TuyaStatus(parsing: message.payload)
        }
    }

    /// Sets data points; returns the points as the device answered them, or, when it only
    /// acknowledged (some firmware answers empty and pushes `STATUS` after), its status read
    /// afterwards.
    @discardableResult
    public func set(_ dps: JSONObject) async throws(TetherError) -> TuyaStatus {
        let (command, payload) = TuyaRequest.control(dps, deviceID: address.deviceID, version: address.version, time: clock())
        try await send(command, payload)
        while true {
            let message = try await receive()
            guard message.command == command else { continue }
            try Self.check(message)
            if !message.payload.isEmpty, let status = try? TuyaStatus(parsing: message.payload) { return status }
            return try await status()
        }
    }

    /// Keeps the connection alive (devices drop silent clients after about 30 s).
    public func heartbeat() async throws(TetherError) {
        let (command, payload) = TuyaRequest.heartbeat(deviceID: address.deviceID)
        try await send(command, payload)
        while try await receive().command != .heartbeat {}
    }

    /// The next data points the device pushes (or answers).
    public func nextReport() async throws(TetherError) -> TuyaStatus {
        while true {
            let message = try await receive()
            try Self.check(message)
            if !message.payload.isEmpty, let status = try? TuyaStatus(parsing: message.payload) { return status }
        }
    }

    // MARK: The wire

    func negotiate() async throws(TetherError) {
        guard address.version.negotiatesSessionKey else { return }
        let handshake = try TuyaHandshake.App(version: address.version, localKey: address.localKey)
        try await write(handshake.start(sequence: nextSequence()))
        let response: TuyaMessage
        do {
            response = try await receive()
        } catch {
            throw TetherError(
                .sessionNegotiationFailed, "step 2: no SESS_KEY_NEG_RESP (\(error.message)); a wrong local key often shows as a closed connection")
        }
        let (finish, sessionKey) = try handshake.finish(after: response, sequence: nextSequence())
        try await write(finish)
        codec.key = sessionKey
    }

    private func nextSequence() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    private func send(_ command: TuyaCommand, _ payload: [UInt8]) async throws(TetherError) {
        try await write(TuyaMessage(sequence: nextSequence(), command: command, payload: payload))
    }

    private func write(_ message: TuyaMessage) async throws(TetherError) {
        let frame = try codec.encode(message)
        do {
            try await outbound.write(frame)
        } catch {
            throw TetherError(.connectionClosed, "the device closed the connection")
        }
    }

    private func receive() async throws(TetherError) -> TuyaMessage {
        while true {
            if let message = try codec.decode(&pending) { return message }
            let chunk: ByteBuffer?
            do {
                chunk = try await inbound.next()
            } catch {
                throw TetherError(.connectionClosed, "the connection failed: \(error)")
            }
            guard var chunk else {
                throw TetherError(.connectionClosed, "the device closed the connection (it may serve another client, or refused the key)")
            }
            pending.writeBuffer(&chunk)
        }
    }

    private static func check(_ message: TuyaMessage) throws(TetherError) {
        if let code = message.returnCode, code != 0 {
            let text = String(decoding: message.payload, as: UTF8.self)
            throw TetherError(.unexpectedResponse, "the device answered \(message.command) with return code \(code)\(text.isEmpty ? "" : ": \(text)")")
        }
    }
}

/// Opens scoped connections to Tuya devices.
public enum TuyaLANClient {
    /// Connects, negotiates, runs `body` and closes. `timeout` bounds the whole exchange: past it
    /// the connection is closed and the call fails with `TetherError.Code.timeout`.
    public static func withConnection<Result>(
        to address: TuyaDeviceAddress, timeout: Duration = .seconds(5), _ body: (TuyaConnection) async throws(TetherError) -> Result
    ) async throws(TetherError) -> Result {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: address.host, port: address.port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
        } catch {
            throw TetherError(.connectionFailed, "cannot connect to \(address.host):\(address.port): \(error)")
        }
        let expired = TimeoutFlag()
        let deadline = channel.channel.eventLoop.scheduleTask(
            in: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        ) {
            expired.fire()
            channel.channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        var outcome: Swift.Result<Result, TetherError>?
        do {
            try await channel.executeThenClose { inbound, outbound in
                do throws(TetherError) {
                    let connection = try TuyaConnection(address: address, inbound: inbound.makeAsyncIterator(), outbound: outbound)
                    try await connection.negotiate()
                    outcome = .success(try await body(connection))
                } catch {
                    outcome = .failure(error)
                }
            }
        } catch {
            if outcome == nil { outcome = .failure(TetherError(.connectionClosed, "the connection failed: \(error)")) }
        }
        switch outcome {
        case .success(let value)?:
            return value
        case .failure(let error)? where expired.fired && error.code == .connectionClosed:
            throw TetherError(.timeout, "the device did not answer within \(timeout) (a 3.1-3.3 device ignores requests sealed with another local key)")
        case .failure(let error)?:
            throw error
        case nil:
            throw TetherError(.connectionClosed, "the connection ended")
        }
    }
}

private final class TimeoutFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func fire() { value.store(true, ordering: .relaxed) }
    var fired: Bool { value.load(ordering: .relaxed) }
}

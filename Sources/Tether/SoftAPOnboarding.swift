import NIOCore
import NIOPosix
import Synchronization
import TetherCore
import TetherGizwitsLAN

/// How the SDK onboards a GAgent device in SoftAP mode (`shared/reference/gizwits-lan.md` §10).
public struct SoftAPOptions: Sendable, CustomStringConvertible {
    /// The device on its own access point (`XPG-GAgent-xxxx`): UDP 12414 of 10.10.100.254.
    public var device: LANEndpoint
    /// The local address to send from and listen on.
    public var listenHost: String
    /// Where devices announce themselves once on the router's network (`0x0019`, `0x0005`); nil
    /// does not wait for it.
    public var announcementPort: Int?
    /// Time between `0x0001` sends until the device answers `0x0002`.
    public var retryInterval: Duration
    /// How long the device may take to answer.
    public var answerTimeout: Duration
    /// How long to wait for its announcement on the router's network (the phone moves back to it
    /// meanwhile).
    public var announcementTimeout: Duration
    /// A pairing token for the device to present to the cloud, after the key in `0x0001`
    /// (Tether's extension, which GAgent firmware leaves unread). A secret.
    /// ``TetherClient/onboard(_:)`` fills it in.
    public var pairingToken: String?
    /// Send the credentials to GAgent's `web_config.cgi` on this TCP port of the device's address
    /// (GAgent: 80) instead of `0x0001`; nil sends `0x0001`. The firmware does no
    /// percent-decoding, so only printable ASCII without spaces, `&`, `#`, `%`, `+` or `?` goes.
    public var webConfigPort: Int?

    public init(
        device: LANEndpoint = LANEndpoint(host: "10.10.100.254", port: 12414), listenHost: String = "0.0.0.0", announcementPort: Int? = 2415,
        retryInterval: Duration = .seconds(1), answerTimeout: Duration = .seconds(15), announcementTimeout: Duration = .seconds(60)
    ) {
        self.device = device
        self.listenHost = listenHost
        self.announcementPort = announcementPort
        self.retryInterval = retryInterval
        self.answerTimeout = answerTimeout
        self.announcementTimeout = announcementTimeout
        self.pairingToken = nil
        self.webConfigPort = nil
    }

    public var description: String { "SoftAPOptions(\(device))" }
}

/// A device that took the credentials, and what it said of itself on the router's network.
public struct SoftAPResult: Sendable, Hashable {
    /// From its `0x0019`/`0x0005` announcement, when waited for.
    public var mac: String?
    public var did: String?
    public var productKey: String?
    /// Where the announcement came from.
    public var ip: String?
    public var trace: OnboardingTrace
}

/// GAgent SoftAP onboarding: `0x0001` with the SSID and password to the device's access point,
/// repeated until its `0x0002`, then its announcement on UDP 2415 once it has joined the router.
public enum SoftAPOnboarding {
    /// - Throws: ``OnboardingFailure`` at `preparing` (`bindFailed`, `invalidArgument`: GAgent takes
    ///   an SSID and a password of at most 32 bytes), `device_acknowledged` (`timeout`: no `0x0002`),
    ///   or `seen_on_lan` (`timeout`: no announcement).
    public static func run(
        ssid: String, password: String, options: SoftAPOptions = .init(), progress: @escaping @Sendable (OnboardingStep) -> Void = { _ in }
    ) async throws(OnboardingFailure) -> SoftAPResult {
        try await run(ssid: ssid, password: password, options: options, progress: progress, recorder: OnboardingRecorder(mode: "softap-gagent"))
    }

    static func run(
        ssid: String, password: String, options: SoftAPOptions, progress: @escaping @Sendable (OnboardingStep) -> Void, recorder: OnboardingRecorder
    ) async throws(OnboardingFailure) -> SoftAPResult {
        var step = OnboardingStep.preparing
        func fail(_ error: TetherError) -> OnboardingFailure {
            OnboardingFailure(step: step, error: error, trace: recorder.finish("failed", ["step": .string(step.rawValue), "code": .string(error.code.name)]))
        }
        progress(step)
        recorder.record(
            "start",
            [
                "device": .string(options.device.description), "ssid_bytes": .int(Int64(ssid.utf8.count)), "password_bytes": .int(Int64(password.utf8.count)),
                "pairing_token": .bool(options.pairingToken != nil),
            ])
        guard (1...32).contains(ssid.utf8.count), password.utf8.count <= 32 else {
            throw fail(TetherError(.invalidArgument, "GAgent takes an SSID of 1 to 32 bytes and a password of at most 32"))
        }
        if options.webConfigPort != nil {
            do throws(TetherError) {
                _ = try GizwitsWebConfig(ssid: ssid, password: password, pairingToken: options.pairingToken).target()
            } catch {
                throw fail(error)
            }
        }
        let request = GizwitsLANMessage.softAPConfiguration(ssid: ssid, key: password, pairingToken: options.pairingToken).frame.bytes
        let outcome: Result<SoftAPResult, TetherError>
        do {
            // Listening for the announcement from the start: a device may join the router faster
            // than the phone gets back to it.
            func session(_ announcements: UDPSocket?) async throws(TetherError) -> Result<SoftAPResult, TetherError> {
                if let webConfigPort = options.webConfigPort {
                    step = .sendingCredentials
                    progress(step)
                    try await webConfig(ssid: ssid, password: password, port: webConfigPort, options: options, recorder: recorder)
                    step = .deviceAcknowledged
                    progress(step)
                    guard let announcements else { return .success(SoftAPResult(trace: recorder.finish("acknowledged"))) }
                    step = .seenOnLAN
                    progress(step)
                    return try await awaitAnnouncement(on: announcements, timeout: options.announcementTimeout, recorder: recorder)
                }
                return try await withUDP(host: options.listenHost, port: 0) { socket throws(TetherError) in
                    step = .sendingCredentials
                    progress(step)
                    guard let target = try? SocketAddress.makeAddressResolvingHost(options.device.host, port: options.device.port) else {
                        throw TetherError(.invalidArgument, "cannot resolve \(options.device.host)")
                    }
                    do throws(TetherError) {
                        try await exchange(request, with: target, on: socket, options: options, recorder: recorder)
                    } catch {
                        // No 0x0002: the step that failed is the device's acknowledgement.
                        if error.code == .timeout { step = .deviceAcknowledged }
                        throw error
                    }
                    step = .deviceAcknowledged
                    progress(step)
                    recorder.record("acknowledged")
                    guard let announcements else { return .success(SoftAPResult(trace: recorder.finish("acknowledged"))) }
                    step = .seenOnLAN
                    progress(step)
                    return try await awaitAnnouncement(on: announcements, timeout: options.announcementTimeout, recorder: recorder)
                }
            }
            if let port = options.announcementPort {
                outcome = try await withUDP(host: options.listenHost, port: port) { announcements throws(TetherError) in try await session(announcements) }
            } else {
                outcome = try await session(nil)
            }
        } catch {
            throw fail(error)
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error): throw fail(error)
        }
    }

    /// One `GET /web_config.cgi?ssid=…&pass=…` (and Tether's `&token=…`); the firmware answers 200
    /// with a page either way, and its form when it did not take the query.
    private static func webConfig(
        ssid: String, password: String, port: Int, options: SoftAPOptions, recorder: OnboardingRecorder
    ) async throws(TetherError) {
        let target = try GizwitsWebConfig(ssid: ssid, password: password, pairingToken: options.pairingToken).target()
        let response = try await HTTPKeepAliveConnection.withConnection(host: options.device.host, port: port, timeout: options.answerTimeout) {
            connection throws(TetherError) in try await connection.get(target)
        }
        recorder.record("web_config", ["status": .int(Int64(response.statusCode)), "bytes": .int(Int64(response.body.count))])
        guard response.statusCode == 200, !String(decoding: response.body, as: UTF8.self).contains("<form") else {
            throw TetherError(.unexpectedResponse, "the device did not take the credentials (HTTP \(response.statusCode)): is it in SoftAP mode?")
        }
    }

    /// Sends `0x0001` every retry interval until a `0x0002` from the device, or the timeout.
    private static func exchange(
        _ request: ByteBuffer, with target: SocketAddress, on socket: UDPSocket, options: SoftAPOptions, recorder: OnboardingRecorder
    ) async throws(TetherError) {
        let deadline = ContinuousClock.now + options.answerTimeout
        var sent = 0
        while ContinuousClock.now < deadline {
            try await socket.send(request, to: target)
            sent += 1
            recorder.record("sent_0x0001", ["attempt": .int(Int64(sent))])
            let wait = min(options.retryInterval, deadline - ContinuousClock.now)
            if let datagram = try await socket.receive(within: wait),
                case .softAPConfigurationAck? = try? GizwitsLANMessage(frame: GizwitsLANFrame.read(datagram: datagram.data, maximumLength: 1024))
            {
                return
            }
        }
        throw TetherError(.timeout, "the device did not answer 0x0001 within \(options.answerTimeout) (is the phone on its access point?)")
    }

    private static func awaitAnnouncement(
        on socket: UDPSocket, timeout: Duration, recorder: OnboardingRecorder
    ) async throws(TetherError) -> Result<
        SoftAPResult, TetherError
    > {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let datagram = try await socket.receive(within: deadline - ContinuousClock.now) else { break }
            let message = try? GizwitsLANMessage(frame: GizwitsLANFrame.read(datagram: datagram.data, maximumLength: 1024))
            let ip = datagram.remoteAddress.ipAddress
            switch message {
            case .configurationSuccess(let mac, let productKey, let did)?:
                return .success(
                    SoftAPResult(
                        mac: MACAddress.display(mac), did: did, productKey: productKey, ip: ip, trace: recorder.finish("seen_on_lan", ["ip": .string(ip ?? "")])
                    ))
            case .announcement(let info)?:
                return .success(
                    SoftAPResult(
                        mac: info.macString, did: info.did, productKey: info.productKey, ip: ip,
                        trace: recorder.finish("seen_on_lan", ["ip": .string(ip ?? "")])))
            default:
                continue
            }
        }
        throw TetherError(.timeout, "the device did not announce itself on the router's network within \(timeout)")
    }
}

/// One UDP socket for a sequence of sends and timed receives.
final class UDPSocket {
    private let outbound: NIOAsyncChannelOutboundWriter<AddressedEnvelope<ByteBuffer>>
    private var inbound: NIOAsyncChannelInboundStream<AddressedEnvelope<ByteBuffer>>.AsyncIterator
    private let channel: any Channel

    init(
        channel: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>,
        inbound: NIOAsyncChannelInboundStream<AddressedEnvelope<ByteBuffer>>, outbound: NIOAsyncChannelOutboundWriter<AddressedEnvelope<ByteBuffer>>
    ) {
        self.channel = channel.channel
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    /// What sending gives when the system withholds the local network: a denied permission
    /// (iOS answers a send to the LAN with "no route to host" then), or a policy (EPERM, EACCES).
    #if canImport(Darwin)
    static let deniedErrnos: Set<Int32> = [EPERM, EACCES, EHOSTUNREACH]
    #else
    static let deniedErrnos: Set<Int32> = [EPERM, EACCES]
    #endif

    func send(_ bytes: ByteBuffer, to target: SocketAddress) async throws(TetherError) {
        do { try await outbound.write(AddressedEnvelope(remoteAddress: target, data: bytes)) } catch {
            if let io = error as? IOError, Self.deniedErrnos.contains(io.errnoCode) {
                throw TetherError(
                    .localNetworkDenied,
                    "the system refused the app the local network (\(io)): on iOS, the local-network permission (NSLocalNetworkUsageDescription) or, for smart config, the multicast entitlement"
                )
            }
            throw TetherError(.connectionFailed, "the network refused a datagram to \(target): \(error)")
        }
    }

    /// The next datagram, or nil when none came within `wait`.
    func receive(within wait: Duration) async throws(TetherError) -> AddressedEnvelope<ByteBuffer>? {
        guard wait > .zero else { return nil }
        let channel = self.channel
        let expired = Mutex(false)
        // A datagram socket has no read timeout: a pending read is woken by a marker we send ourselves.
        let wake = channel.eventLoop.scheduleTask(in: TimeAmount(wait)) {
            expired.withLock { $0 = true }
            if let local = channel.localAddress {
                let marker = AddressedEnvelope(remoteAddress: local, data: ByteBuffer(bytes: [0x54, 0x45, 0x54, 0x48]))
                channel.writeAndFlush(marker, promise: nil)
            }
        }
        defer { wake.cancel() }
        while true {
            let next: AddressedEnvelope<ByteBuffer>?
            do { next = try await inbound.next() } catch { throw TetherError(.connectionClosed, "the socket failed: \(error)") }
            guard let next else { throw TetherError(.connectionClosed, "the socket closed") }
            if next.remoteAddress == channel.localAddress, next.data.readableBytesView.elementsEqual([0x54, 0x45, 0x54, 0x48]) {
                if expired.withLock({ $0 }) { return nil }
                continue
            }
            return next
        }
    }
}

/// Runs `body` with a UDP socket bound to `host:port` (0: any), closed after.
func withUDP<Result>(host: String, port: Int, _ body: (UDPSocket) async throws(TetherError) -> Result) async throws(TetherError) -> Result {
    let channel: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>
    do {
        channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.socketOption(.so_broadcast), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                }
            }
    } catch {
        throw TetherError(.bindFailed, "cannot open UDP \(host):\(port): \(error)")
    }
    var outcome: Swift.Result<Result, TetherError>?
    do {
        try await channel.executeThenClose { inbound, outbound in
            let socket = UDPSocket(channel: channel, inbound: inbound, outbound: outbound)
            do throws(TetherError) { outcome = .success(try await body(socket)) } catch { outcome = .failure(error) }
        }
    } catch {
        if outcome == nil { outcome = .failure(TetherError(.connectionClosed, "the socket failed: \(error)")) }
    }
    guard let outcome else { throw TetherError(.connectionClosed, "the socket closed") }
    return try outcome.get()
}

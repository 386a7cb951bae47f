public import Logging
public import NIOCore
import NIOPosix
public import TetherCore
import TetherGizwitsLAN
import Synchronization

/// Serves one ``VirtualDevice`` on the LAN the way a GAgent Wi-Fi module does: UDP discovery and
/// SoftAP onboarding, start-up announcements, and the TCP control channel.
///
/// ```swift
/// let server = LANDeviceServer(device: device, configuration: .init(host: "127.0.0.1"))
/// try await server.run()   // until cancelled
/// ```
public final class LANDeviceServer: Sendable {
    /// The device whose state the server announces, reports and changes.
    public let device: VirtualDevice
    /// The addresses, limits and announcement settings the server runs with.
    public let configuration: LANDeviceConfiguration
    let logger: Logger
    private let group: any EventLoopGroup

    private let bound = AsyncPromise<LANDeviceAddresses, TetherError>()
    private let clients = Mutex<[ObjectIdentifier: any Channel]>([:])
    /// A SoftAP join under way: the app's repeated `0x0001`s start one.
    private let softAPJoining = Mutex(false)
    /// The UDP socket's writer while it is open: web_config.cgi joins announce through it.
    let announcer = Mutex<NIOAsyncChannelOutboundWriter<AddressedEnvelope<ByteBuffer>>?>(nil)

    /// - Parameter group: the event loops to run on; NIO's shared singleton when nil.
    public init(
        device: VirtualDevice, configuration: LANDeviceConfiguration = .init(), logger: Logger = Logger(label: "tether.agent"),
        group: (any EventLoopGroup)? = nil
    ) {
        self.device = device
        self.configuration = configuration
        self.logger = logger
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
    }

    /// Waits until the sockets are bound and returns their addresses.
    public func addresses() async throws(TetherError) -> LANDeviceAddresses {
        try await bound.value(ifCancelled: { TetherError(.cancelled, "stopped waiting for the LAN sockets") })
    }

    /// Number of TCP clients connected right now.
    public var clientCount: Int { clients.withLock { $0.count } }

    /// Closes every TCP connection (a device reboot, as its apps see it).
    public func dropConnections() {
        let channels = clients.withLock { Array($0.values) }
        for channel in channels { channel.close(promise: nil) }
    }

    /// Binds and serves until cancelled; returns normally when cancelled. Ports that are taken
    /// are tried again for ``LANDeviceConfiguration/bindRetry``.
    public func run() async throws {
        let deadline = ContinuousClock.now + configuration.bindRetry
        var sockets: (udp: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>, tcp: NIOAsyncChannel<any Channel, Never>)?
        var web: WebConfigListener?
        while sockets == nil {
            do {
                let pair = try await bindSockets()
                do {
                    if let port = configuration.webConfigPort { web = try await bindWebConfig(port: port) }
                } catch {
                    try? await pair.0.executeThenClose { _, _ in }
                    try? await pair.1.executeThenClose { _ in }
                    throw error
                }
                sockets = pair
            } catch {
                guard ContinuousClock.now < deadline, !Task.isCancelled else {
                    let failure = TetherError(
                        .bindFailed, "cannot listen on \(configuration.host) UDP \(configuration.udpPort) / TCP \(configuration.tcpPort): \(error)")
                    bound.resolve(.failure(failure))
                    throw failure
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        guard let (udp, tcp) = sockets else { return }
        let addresses = LANDeviceAddresses(
            host: configuration.host,
            udpPort: udp.channel.localAddress?.port ?? configuration.udpPort,
            tcpPort: tcp.channel.localAddress?.port ?? configuration.tcpPort,
            webConfigPort: web.map { $0.channel.localAddress?.port ?? configuration.webConfigPort ?? 0 }
        )
        bound.resolve(.success(addresses))
        logger.debug(
            "virtual device listening",
            metadata: ["tether.did": "\(device.identity.did)", "tether.udp": "\(addresses.udpPort)", "tether.tcp": "\(addresses.tcpPort)"])

        do {
            try await serve(udp: udp, tcp: tcp, web: web)
        } catch _ where Task.isCancelled {
            // Cancellation is how a server is stopped; it is not a failure.
        }
    }

    /// Both sockets, or neither.
    private func bindSockets() async throws -> (
        NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>, NIOAsyncChannel<any Channel, Never>
    ) {
        let udp = try await bindUDP(port: configuration.udpPort)
        let configuration = self.configuration
        do {
            // Accepted channels are handed over raw, with reading off, and wrapped by the task that
            // serves them: a NIOAsyncChannel made in the initializer and never served (a client
            // connecting as the server stops) traps when it is released (swift-nio#2637).
            let tcp = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.autoRead, value: false)
                .bind(host: configuration.host, port: configuration.tcpPort) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            IdleStateHandler(readTimeout: TimeAmount(configuration.idleTimeout)),
                            CloseOnIdleHandler(),
                            ByteToMessageHandler(GizwitsLANFrameDecoder(maximumLength: configuration.maximumFrameLength)),
                            MessageToByteHandler(GizwitsLANFrameEncoder()),
                        ])
                        return channel
                    }
                }
            return (udp, tcp)
        } catch {
            try? await udp.executeThenClose { _, _ in }
            throw error
        }
    }

    private func serve(
        udp: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>,
        tcp: NIOAsyncChannel<any Channel, Never>, web: WebConfigListener?
    ) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.keepServingUDP(udp) }
            if let web { group.addTask { try await self.serveWebConfig(web) } }
            group.addTask {
                try await tcp.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { connections in
                        for try await connection in inbound {
                            connections.addTask { await self.serve(connection) }
                        }
                    }
                }
            }
        }
    }

    // MARK: UDP

    /// NIO closes a datagram socket on most send errors; a device must not go deaf for the rest
    /// of its life because one answer could not be sent, so the socket is opened again.
    private func keepServingUDP(_ first: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>) async throws {
        var udp = first
        let port = first.channel.localAddress?.port ?? configuration.udpPort
        var announce = true
        while true {
            try await serveUDP(udp, announce: announce)
            try Task.checkCancellation()
            logger.warning("the UDP socket closed; opening it again", metadata: ["tether.did": "\(device.identity.did)"])
            announce = false
            while true {
                try await Task.sleep(for: .milliseconds(500))
                do {
                    udp = try await bindUDP(port: port)
                    break
                } catch {
                    logger.warning("the UDP socket cannot be opened again yet", metadata: ["tether.error": "\(error)"])
                }
            }
        }
    }

    private func bindUDP(port: Int) async throws -> NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>> {
        try await DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.socketOption(.so_broadcast), value: 1)
            .bind(host: configuration.host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                }
            }
    }

    private func serveUDP(_ udp: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>, announce: Bool) async throws {
        try await udp.executeThenClose { inbound, outbound in
            announcer.withLock { $0 = outbound }
            defer { announcer.withLock { $0 = nil } }
            try await withThrowingDiscardingTaskGroup { group in
                if announce { group.addTask { await self.announce(.announcement(self.deviceInfo), through: outbound) } }
                for try await datagram in inbound {
                    // An answer to port 0 or to no address cannot be sent (and the failure would close the socket).
                    guard let port = datagram.remoteAddress.port, port != 0, let address = datagram.remoteAddress.ipAddress,
                        address != "0.0.0.0", address != "::"
                    else { continue }
                    let message: GizwitsLANMessage
                    do {
                        message = try GizwitsLANMessage(frame: GizwitsLANFrame.read(datagram: datagram.data, maximumLength: configuration.maximumFrameLength))
                    } catch {
                        logger.debug("ignored a malformed datagram", metadata: ["tether.from": "\(datagram.remoteAddress)", "tether.error": "\(error)"])
                        continue
                    }
                    switch message {
                    case .discoveryRequest:
                        let reply = GizwitsLANMessage.discoveryResponse(deviceInfo).frame.bytes
                        try await outbound.write(AddressedEnvelope(remoteAddress: datagram.remoteAddress, data: reply))
                    case .softAPConfiguration(let ssid, let key, let token):
                        // GAgent answers even when the lengths are invalid, but only in onboarding mode.
                        guard device.isOnboarding else { continue }
                        let ack = GizwitsLANMessage.softAPConfigurationAck.frame.bytes
                        try await outbound.write(AddressedEnvelope(remoteAddress: datagram.remoteAddress, data: ack))
                        guard ssid.utf8.count <= 32, key.utf8.count <= 32, !ssid.isEmpty else { continue }
                        group.addTask { await self.join(ssid: ssid, key: key, pairingToken: token, through: outbound) }
                    default:
                        continue
                    }
                }
            }
        }
    }

    private var deviceInfo: GizwitsDeviceInfo {
        let identity = device.identity
        return GizwitsDeviceInfo(did: identity.did, mac: identity.mac, firmwareVersion: device.firmwareVersion, productKey: identity.productKey)
    }

    /// Joins the network through the router (its delay and faults); a device that joined
    /// announces itself, one that did not stays in onboarding mode for another attempt.
    func join(ssid: String, key: String, pairingToken: String?, through outbound: NIOAsyncChannelOutboundWriter<AddressedEnvelope<ByteBuffer>>?) async {
        guard
            softAPJoining.withLock({ joining in
                defer { joining = true }; return !joining
            })
        else { return }
        defer { softAPJoining.withLock { $0 = false } }
        let result = await configuration.router.join(ssid: ssid, password: key)
        guard !Task.isCancelled else { return }
        guard case .joined = result else {
            logger.notice("SoftAP onboarding: the join failed", metadata: ["tether.ssid": "\(ssid)", "tether.result": "\(result)"])
            return
        }
        guard device.configureWiFi(ssid: ssid, key: key, pairingToken: pairingToken), let outbound = outbound ?? announcer.withLock({ $0 }) else { return }
        let identity = device.identity
        await announce(GizwitsLANMessage.configurationSuccess(mac: identity.mac, productKey: identity.productKey, did: identity.did), through: outbound)
    }

    private func announce(_ message: GizwitsLANMessage, through outbound: NIOAsyncChannelOutboundWriter<AddressedEnvelope<ByteBuffer>>) async {
        guard let target = configuration.announcementTarget, configuration.announcementCount > 0,
            let address = try? SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
        else { return }
        let bytes = message.frame.bytes
        for _ in 0..<configuration.announcementCount {
            do {
                try await outbound.write(AddressedEnvelope(remoteAddress: address, data: bytes))
            } catch {
                logger.debug("announcement not sent", metadata: ["tether.target": "\(address)", "tether.error": "\(error)"])
                return
            }
            do { try await Task.sleep(for: configuration.announcementInterval) } catch { return }
        }
    }

    // MARK: TCP

    private var hardwareInfo: GizwitsHardwareInfo {
        GizwitsHardwareInfo(
            wifiHardwareVersion: "TETHER", wifiSoftwareVersion: device.firmwareVersion,
            mcuHardwareVersion: "SIM", mcuSoftwareVersion: "1", p0Version: "00000004",
            wifiFirmwareVersion: device.firmwareVersion, productKey: device.identity.productKey
        )
    }

    private func serve(_ channel: any Channel) async {
        guard let connection = await servedChannel(channel, carrying: GizwitsLANFrame.self) else { return }
        let client = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
        let admitted = clients.withLock { clients in
            guard clients.count < configuration.maximumClients else { return false }
            clients[ObjectIdentifier(channel)] = channel
            return true
        }
        guard admitted else {
            device.events.yield(.clientRefused(client, reason: "already \(configuration.maximumClients) clients"))
            try? await channel.close()
            return
        }
        device.events.yield(.clientConnected(client))
        defer {
            _ = clients.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
            device.events.yield(.clientDisconnected(client))
        }
        // The state machine belongs to the reader below; the pusher only needs to know whether
        // the client has logged in.
        let loggedIn = LoginFlag()
        let changes = device.changes.subscribe()
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Push every change to a logged-in client, as GAgent does with 0x0091.
                        for await status in changes {
                            guard loggedIn.value.load(ordering: .acquiring), !self.device.isMuted,
                                self.device.lanGrants.now() < loggedIn.grantExpiry.load(ordering: .acquiring)
                            else { continue }
                            let report = try self.device.codec.encode(.report(status))
                            try await outbound.write(GizwitsLANMessage.p0FromDevice(report).frame)
                        }
                    }
                    group.addTask {
                        defer { channel.close(promise: nil) }
                        var session = DeviceSessionStateMachine(client: client)
                        for try await frame in inbound {
                            guard !self.device.isMuted else { continue }
                            let message: GizwitsLANMessage
                            do {
                                message = try GizwitsLANMessage(frame: frame)
                            } catch {
                                self.logger.debug(
                                    "closing a client that sent a malformed frame", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
                                return
                            }
                            let actions = session.receive(message, device: self.device, hotspots: self.configuration.hotspots, hardwareInfo: self.hardwareInfo)
                            loggedIn.grantExpiry.store(session.grantExpiry ?? .max, ordering: .releasing)
                            loggedIn.value.store(session.loggedIn, ordering: .releasing)
                            for action in actions {
                                switch action {
                                case .send(let reply):
                                    try await outbound.write(reply.frame)
                                case .close(let reason):
                                    self.device.events.yield(.clientRefused(client, reason: reason))
                                    return
                                case .closeSoon:
                                    try await Task.sleep(for: .milliseconds(100))
                                    return
                                }
                            }
                        }
                    }
                    // Whichever ends first (the client left, or was closed) ends the connection.
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("client connection ended", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
        }
    }
}

/// An accepted channel (handed over raw, reading off: swift-nio#2637) wrapped for the task that
/// serves it, its reading turned on; nil (and the channel closed) when that fails.
func servedChannel<Message: Sendable>(_ channel: any Channel, carrying: Message.Type) async -> NIOAsyncChannel<Message, Message>? {
    do {
        return try await channel.eventLoop.submit {
            let wrapped = try NIOAsyncChannel<Message, Message>(wrappingChannelSynchronously: channel)
            channel.setOption(.autoRead, value: true).whenComplete { _ in }
            return wrapped
        }.get()
    } catch {
        channel.close(promise: nil)
        return nil
    }
}

/// Whether a client has logged in (and until when), shared by a connection's reader and its status pusher.
private final class LoginFlag: Sendable {
    let value = Atomic<Bool>(false)
    /// Unix seconds when the session's grant lapses; `.max` after a passcode login.
    let grantExpiry = Atomic<Int64>(.max)
}

/// Closes a connection on which nothing was read for the idle timeout.
final class CloseOnIdleHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

public import Logging
import NIOCore
import NIOPosix
public import TetherCore
public import TetherTuyaLAN
import Synchronization

/// How a virtual device presents itself as a Tuya device.
public struct TuyaDeviceConfiguration: Sendable {
    public var host: String
    /// The TCP port (Tuya: 6668).
    public var port: Int
    /// `gwId` / `devId`.
    public var deviceID: String
    /// The 16-byte local key. A secret.
    public var localKey: [UInt8]
    public var version: TuyaVersion
    /// A client silent this long is dropped (Tuya devices: about 30 s).
    public var idleTimeout: Duration
    /// Where announcements go: UDP 6666 (3.1) or 6667 (3.2+) of the broadcast address by default,
    /// of 127.0.0.1 for a device on loopback; nil sends none.
    public var announcementTarget: (host: String, port: Int)?
    public var announcementInterval: Duration
    /// The product key announced.
    public var productKey: String
    /// 3.5: the UDP port where apps' `REQ_DEVINFO` probes are answered (Tuya: 7000; 0 lets the
    /// system choose); nil answers none.
    public var probePort: Int?

    public init(
        host: String = "0.0.0.0", port: Int = 6668, deviceID: String, localKey: [UInt8], version: TuyaVersion, idleTimeout: Duration = .seconds(30),
        announcementTarget: (host: String, port: Int)?? = .none, announcementInterval: Duration = .seconds(5), productKey: String = "keydeadbeef12345",
        probePort: Int? = 7000
    ) throws(TetherError) {
        guard localKey.count == 16 else { throw TetherError(.invalidArgument, "a Tuya local key is 16 bytes") }
        self.host = host
        self.port = port
        self.deviceID = deviceID
        self.localKey = localKey
        self.version = version
        self.idleTimeout = idleTimeout
        let loopback = host.hasPrefix("127.") || host == "::1" || host == "localhost"
        self.announcementTarget = announcementTarget ?? (loopback ? "127.0.0.1" : "255.255.255.255", TuyaDiscovery.port(for: version))
        self.announcementInterval = announcementInterval
        self.productKey = productKey
        self.probePort = version == .v35 ? probePort : nil
    }
}

/// A virtual device on the Tuya local protocol (3.1–3.5): one client at a time, as the devices
/// do (the next waits until the current one leaves), the session key negotiated on 3.4/3.5, reads, writes,
/// heartbeats, and every change of its data points pushed as `STATUS`, whoever made it.
public final class TuyaDeviceServer: Sendable {
    public let device: VirtualDevice
    public let configuration: TuyaDeviceConfiguration
    private let logger: Logger
    private let bound = AsyncPromise<Int, TetherError>()
    private let probeBound = AsyncPromise<Int?, Never>()
    private let busy = Atomic<Bool>(false)

    public init(device: VirtualDevice, configuration: TuyaDeviceConfiguration, logger: Logger = Logger(label: "tether.agent.tuya")) {
        self.device = device
        self.configuration = configuration
        self.logger = logger
    }

    /// The TCP port, once listening.
    public func port() async throws(TetherError) -> Int {
        try await bound.value(ifCancelled: { TetherError(.cancelled, "stopped waiting for the Tuya socket") })
    }

    /// The UDP port probes are answered on (3.5), once listening; nil when none.
    public func probePort() async -> Int? {
        guard configuration.probePort != nil else { return nil }
        return await probeBound.result(ifCancelled: { .success(nil) }).get()
    }

    /// Listens and serves until cancelled.
    public func run() async throws {
        let configuration = self.configuration
        let server: NIOAsyncChannel<any Channel, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.autoRead, value: false)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            IdleStateHandler(readTimeout: TimeAmount(configuration.idleTimeout)), CloseOnIdleHandler(),
                        ])
                        return channel
                    }
                }
        } catch {
            let failure = TetherError(.bindFailed, "cannot listen on \(configuration.host) TCP \(configuration.port): \(error)")
            bound.resolve(.failure(failure))
            throw failure
        }
        bound.resolve(.success(server.channel.localAddress?.port ?? configuration.port))
        do {
            try await withThrowingDiscardingTaskGroup { group in
                if configuration.announcementTarget != nil { group.addTask { await self.announce() } }
                if configuration.probePort != nil { group.addTask { await self.answerProbes() } }
                group.addTask {
                    try await server.executeThenClose { inbound in
                        try await withThrowingDiscardingTaskGroup { connections in
                            for try await channel in inbound { connections.addTask { await self.serve(channel) } }
                        }
                    }
                }
            }
        } catch _ where Task.isCancelled {
            // Cancellation is how a server stops.
        }
    }

    /// 3.5 discovery (§7): an app's `REQ_DEVINFO` on UDP 7000 is answered with the device's
    /// announcement, to the address the probe names (at the port it came from).
    private func answerProbes() async {
        guard let port = configuration.probePort else { return }
        let announcement = TuyaAnnouncement(
            ip: configuration.host, deviceID: configuration.deviceID, productKey: configuration.productKey, version: configuration.version.rawValue)
        do {
            let udp = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: configuration.host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                    }
                }
            probeBound.resolve(.success(udp.channel.localAddress?.port))
            try await udp.executeThenClose { inbound, outbound in
                for try await envelope in inbound {
                    guard let ip = try? TuyaDiscovery.probeAddress(in: Array(envelope.data.readableBytesView)),
                        let target = try? SocketAddress(ipAddress: ip, port: envelope.remoteAddress.port ?? 7000)
                    else { continue }
                    let answer = try TuyaDiscovery.datagram(announcement, version: configuration.version)
                    try await outbound.write(AddressedEnvelope(remoteAddress: target, data: ByteBuffer(bytes: answer)))
                }
            }
        } catch {
            probeBound.resolve(.success(nil))
            logger.info("REQ_DEVINFO probes not answered", metadata: ["tether.udp": "\(port)", "tether.error": "\(error)"])
        }
    }

    /// The device's announcement every interval, as Tuya devices broadcast it (§7).
    private func announce() async {
        guard let target = configuration.announcementTarget, let address = try? SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
        else { return }
        let announcement = TuyaAnnouncement(
            ip: configuration.host, deviceID: configuration.deviceID, productKey: configuration.productKey, version: configuration.version.rawValue)
        do {
            let udp = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.so_broadcast), value: 1)
                .bind(host: configuration.host, port: 0) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                    }
                }
            try await udp.executeThenClose { _, outbound in
                while !Task.isCancelled {
                    let datagram = try TuyaDiscovery.datagram(announcement, version: configuration.version)
                    try await outbound.write(AddressedEnvelope(remoteAddress: address, data: ByteBuffer(bytes: datagram)))
                    try await Task.sleep(for: configuration.announcementInterval)
                }
            }
        } catch {
            logger.debug("Tuya announcements stopped", metadata: ["tether.error": "\(error)"])
        }
    }

    private func serve(_ channel: any Channel) async {
        let client = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
        // One client at a time: the next waits (starves, as on real devices) until the current
        // one leaves, for at most the idle timeout.
        let deadline = ContinuousClock.now + configuration.idleTimeout
        while !busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(10))) != nil else {
                device.events.yield(.clientRefused(client, reason: "a Tuya device serves one client at a time"))
                try? await channel.close()
                return
            }
        }
        defer { busy.store(false, ordering: .releasing) }
        guard let connection = await servedChannel(channel, carrying: ByteBuffer.self) else { return }
        device.events.yield(.clientConnected(client))
        defer { device.events.yield(.clientDisconnected(client)) }
        do {
            let link = try TuyaLink(configuration: configuration, device: device)
            let changes = device.changes.subscribe()
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Every change, whoever made it, once the session is ready; what a write
                        // was already answered with is not pushed again.
                        for await status in changes {
                            guard let push = link.push(changesIn: status.allValues, time: self.device.lanGrants.now()) else { continue }
                            try await outbound.write(push)
                        }
                    }
                    group.addTask {
                        var pending = ByteBuffer()
                        for try await var chunk in inbound {
                            pending.writeBuffer(&chunk)
                            while let message = try link.decode(&pending) {
                                for action in link.receive(message, device: self.device, client: client) {
                                    switch action {
                                    case .send(let reply): try await outbound.write(try link.encode(reply))
                                    case .useKey(let key): link.useKey(key)
                                    case .close(let reason):
                                        self.device.events.yield(.clientRefused(client, reason: reason))
                                        return
                                    case .refuse(let error):
                                        self.logger.notice("Tuya frame refused", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
                                    }
                                }
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("Tuya client connection ended", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
        }
    }
}

/// One connection's codec and session, shared by its reader and its pusher.
private final class TuyaLink: Sendable {
    private struct State {
        var codec: TuyaCodec
        var session: TuyaDeviceSession
        /// The points as the client last heard them (answers and pushes), by id.
        var reported: JSONObject
    }

    private let state: Mutex<State>
    let points: TuyaDataPointMap

    init(configuration: TuyaDeviceConfiguration, device: VirtualDevice) throws(TetherError) {
        points = TuyaDataPointMap(model: device.model)
        state = Mutex(
            State(
                codec: try TuyaCodec(version: configuration.version, key: configuration.localKey, sender: .device),
                session: try TuyaDeviceSession(
                    version: configuration.version, deviceID: configuration.deviceID, localKey: configuration.localKey, points: points),
                reported: points.dps(device.status.allValues)))
    }

    func decode(_ buffer: inout ByteBuffer) throws(TetherError) -> TuyaMessage? {
        let codec = state.withLock { $0.codec }
        return try codec.decode(&buffer)
    }

    func encode(_ message: TuyaMessage) throws(TetherError) -> ByteBuffer {
        let codec = state.withLock { $0.codec }
        return try codec.encode(message)
    }

    func receive(_ message: TuyaMessage, device: VirtualDevice, client: String) -> [TuyaDeviceSession.Action] {
        state.withLock { state in
            let actions = state.session.receive(message, device: device, client: client)
            for case .send(let reply) in actions where !reply.payload.isEmpty {
                guard let answered = try? TuyaStatus(parsing: reply.payload) else { continue }
                for id in answered.dps.keys { state.reported[id] = answered.dps[id] }
            }
            return actions
        }
    }

    func useKey(_ key: [UInt8]) { state.withLock { $0.codec.key = key } }

    /// A `STATUS` frame with the points that differ from what the client last heard; nil when
    /// none do, or before the session is ready.
    func push(changesIn values: [String: DataValue], time: Int64) -> ByteBuffer? {
        let now = points.dps(values)
        return state.withLock { state -> ByteBuffer? in
            var changed = JSONObject()
            for id in now.keys where now[id] != state.reported[id] { changed[id] = now[id] }
            guard state.session.isReady, !changed.isEmpty else { return nil }
            for id in changed.keys { state.reported[id] = changed[id] }
            let payload = TuyaStatus(dps: changed, time: time).payload(deviceID: state.session.deviceID, version: state.codec.version)
            let message = TuyaMessage(sequence: state.session.nextPushSequence(), command: .status, returnCode: 0, payload: payload)
            return try? state.codec.encode(message)
        }
    }
}

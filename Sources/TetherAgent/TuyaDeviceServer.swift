public import Logging
import NIOCore
import NIOPosix
public import TetherCore
public import TetherTuyaLAN
import Synchronization

/// How a virtual device presents itself as a Tuya device.
public struct TuyaDeviceConfiguration: Sendable, CustomReflectable {
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
    /// `dump` and debuggers show the key redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "deviceID": deviceID, "localKey": "<redacted>", "version": version])
    }

    /// Misbehaviour on purpose, for testing apps: slow answers, outages.
    public var faults: TuyaFaults = TuyaFaults()
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
    let faults: TuyaFaultInjector

    public init(device: VirtualDevice, configuration: TuyaDeviceConfiguration, logger: Logger = Logger(label: "tether.agent.tuya")) {
        self.device = device
        self.configuration = configuration
        self.logger = logger
        self.faults = TuyaFaultInjector(configuration.faults)
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
        device.events.yield(.clientConnected(client))
        defer { device.events.yield(.clientDisconnected(client)) }
        do {
            let link = try TuyaDeviceLink(configuration: configuration, device: device)
            // Answers are made on the channel's event loop (no hop per frame), and so are pushes:
            // every change, whoever made it, once the session is ready; what a write was already
            // answered with is not pushed again. Deferred with execute, never run inside the
            // change, which may come from this connection's own write.
            let observer = device.addChangeObserver { [device, faults] status in
                channel.eventLoop.execute {
                    guard let push = link.push(changesIn: status.allValues, time: device.lanGrants.now()), let delay = faults.answer() else { return }
                    if delay > .zero {
                        channel.eventLoop.scheduleTask(in: TimeAmount(delay)) { channel.writeAndFlush(push, promise: nil) }
                    } else {
                        channel.writeAndFlush(push, promise: nil)
                    }
                }
            }
            defer { device.removeChangeObserver(observer) }
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    TuyaDeviceHandler(link: link, device: self.device, client: client, faults: self.faults, logger: self.logger))
                channel.setOption(.autoRead, value: true).whenComplete { _ in }
            }.get()
            // The server stopping (cancellation) ends the connection too.
            await withTaskCancellationHandler {
                try? await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            channel.close(promise: nil)
            logger.debug("Tuya client connection ended", metadata: ["tether.client": "\(client)", "tether.error": "\(error)"])
        }
    }
}

import NIOCore
import NIOPosix
import Synchronization
public import TetherCore

/// A device heard announcing itself, and the address the announcement came from (which is where
/// to connect: the announced `ip` can be the device's idea of itself, such as 0.0.0.0).
public struct TuyaFoundDevice: Hashable, Sendable {
    public var announcement: TuyaAnnouncement
    public var sourceHost: String

    public init(announcement: TuyaAnnouncement, sourceHost: String) {
        self.announcement = announcement
        self.sourceHost = sourceHost
    }
}

/// Listens for Tuya announcements (§7): UDP 6666 (3.1, plaintext) and 6667 (3.2+, encrypted).
/// It only listens: it sends nothing, unless asked to probe.
public enum TuyaScanner {
    /// For a while, each device once (by id). With `probe`, a 3.5 `REQ_DEVINFO` is also sent there
    /// (a device's address, or a broadcast address) from a socket of its own, naming `appIP`
    /// (default: `host`) as where to answer.
    public static func scan(
        host: String = "0.0.0.0", ports: [Int] = [6666, 6667], duration: Duration = .seconds(6), probe: (host: String, port: Int)? = nil,
        appIP: String? = nil
    ) async throws(TetherError) -> [TuyaFoundDevice] {
        var probeDatagram: (SocketAddress, [UInt8])?
        if let probe {
            guard let target = try? SocketAddress.makeAddressResolvingHost(probe.host, port: probe.port) else {
                throw TetherError(.invalidArgument, "cannot resolve \(probe.host)")
            }
            probeDatagram = (target, try TuyaDiscovery.probe(appIP: appIP ?? (host == "0.0.0.0" ? probe.host : host)))
        }
        let found = FoundDevices()
        try await listen(host: host, ports: ports, probe: probeDatagram) { announcements in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await device in announcements { found.add(device) } }
                try? await Task.sleep(for: duration)
                group.cancelAll()
            }
        }
        return found.devices
    }

    /// Runs `body` with every announcement heard (repeats included) until it returns; the sockets
    /// close then. Throws `TetherError.Code.bindFailed` when a port cannot be listened on.
    public static func withAnnouncements<Result: Sendable>(
        host: String = "0.0.0.0", ports: [Int] = [6666, 6667], _ body: (AsyncStream<TuyaFoundDevice>) async -> Result
    ) async throws(TetherError) -> Result {
        try await listen(host: host, ports: ports, probe: nil, body)
    }

    private static func listen<Result: Sendable>(
        host: String, ports: [Int], probe: (SocketAddress, [UInt8])?, _ body: (AsyncStream<TuyaFoundDevice>) async -> Result
    ) async throws(TetherError) -> Result {
        var sockets: [NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>] = []
        for port in ports + (probe == nil ? [] : [0]) {
            do {
                sockets.append(
                    try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .channelOption(.socketOption(.so_reuseaddr), value: 1)
                        .channelOption(.socketOption(.so_broadcast), value: 1)
                        .bind(host: host, port: port) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                            }
                        })
            } catch {
                for socket in sockets { try? await socket.executeThenClose { _, _ in } }
                throw TetherError(.bindFailed, "cannot listen on UDP \(host):\(port): \(error)")
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(of: TuyaFoundDevice.self, bufferingPolicy: .bufferingNewest(256))
        let prober = probe == nil ? nil : sockets.last.map { ObjectIdentifier($0.channel) }
        return await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                let probing = ObjectIdentifier(socket.channel) == prober ? probe : nil
                group.addTask {
                    try? await socket.executeThenClose { inbound, outbound in
                        if let (target, datagram) = probing {
                            try await outbound.write(AddressedEnvelope(remoteAddress: target, data: ByteBuffer(bytes: datagram)))
                        }
                        for try await envelope in inbound {
                            // Datagrams that are not announcements (other vendors, noise) are skipped.
                            guard let announcement = try? TuyaDiscovery.announcement(in: Array(envelope.data.readableBytesView)) else { continue }
                            continuation.yield(TuyaFoundDevice(announcement: announcement, sourceHost: envelope.remoteAddress.ipAddress ?? announcement.ip))
                        }
                    }
                }
            }
            let result = await body(stream)
            group.cancelAll()
            continuation.finish()
            return result
        }
    }
}

private final class FoundDevices: Sendable {
    private let state = Mutex<[TuyaFoundDevice]>([])

    func add(_ device: TuyaFoundDevice) {
        state.withLock { devices in
            if !devices.contains(where: { $0.announcement.deviceID == device.announcement.deviceID }) { devices.append(device) }
        }
    }

    var devices: [TuyaFoundDevice] { state.withLock { $0 } }
}

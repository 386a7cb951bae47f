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

/// Listens for Tuya announcements (§7): UDP 6666 (3.1, plaintext) and 6667 (3.2+, encrypted),
/// for a while, and returns each device once (by id). It only listens: it sends nothing.
public enum TuyaScanner {
    /// With `probe`, a 3.5 `REQ_DEVINFO` is also sent there (a device's address, or a broadcast
    /// address) from a socket of its own, naming `appIP` (default: `host`) as where to answer.
    public static func scan(
        host: String = "0.0.0.0", ports: [Int] = [6666, 6667], duration: Duration = .seconds(6), probe: (host: String, port: Int)? = nil,
        appIP: String? = nil
    ) async throws(TetherError) -> [TuyaFoundDevice] {
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
        let found = FoundDevices()
        let probeDatagram: (SocketAddress, [UInt8])?
        if let probe {
            guard let target = try? SocketAddress.makeAddressResolvingHost(probe.host, port: probe.port) else {
                throw TetherError(.invalidArgument, "cannot resolve \(probe.host)")
            }
            probeDatagram = (target, try TuyaDiscovery.probe(appIP: appIP ?? (host == "0.0.0.0" ? probe.host : host)))
        } else {
            probeDatagram = nil
        }
        let prober = probe == nil ? nil : sockets.last.map { ObjectIdentifier($0.channel) }
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                let probing = ObjectIdentifier(socket.channel) == prober ? probeDatagram : nil
                group.addTask {
                    try? await socket.executeThenClose { inbound, outbound in
                        if let (target, datagram) = probing {
                            try await outbound.write(AddressedEnvelope(remoteAddress: target, data: ByteBuffer(bytes: datagram)))
                        }
                        for try await envelope in inbound {
                            // Datagrams that are not announcements (other vendors, noise) are skipped.
                            guard let announcement = try? TuyaDiscovery.announcement(in: Array(envelope.data.readableBytesView)) else { continue }
                            found.add(TuyaFoundDevice(announcement: announcement, sourceHost: envelope.remoteAddress.ipAddress ?? announcement.ip))
                        }
                    }
                }
            }
            try? await Task.sleep(for: duration)
            group.cancelAll()
        }
        return found.devices
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

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
    public static func scan(
        host: String = "0.0.0.0", ports: [Int] = [6666, 6667], duration: Duration = .seconds(6)
    ) async throws(TetherError) -> [TuyaFoundDevice] {
        var sockets: [NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>] = []
        for port in ports {
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
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask {
                    try? await socket.executeThenClose { inbound, _ in
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

public import NIOCore
import NIOPosix
import TetherCore

/// A host and port on the LAN.
public struct LANEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// An IP address (v4 or v6) or a host name, resolved when the endpoint is used.
    public var host: String
    /// The port number.
    public var port: Int

    /// An endpoint as given; nothing is resolved or checked yet.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The limited broadcast address on the GAgent discovery port.
    public static let broadcast = LANEndpoint(host: "255.255.255.255", port: 12414)

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A device that answered a discovery request.
public struct GizwitsDiscoveredDevice: Hashable, Sendable {
    /// Who the device says it is: the body of its `0x0004` answer.
    public var info: GizwitsDeviceInfo
    /// The address the answer came from: the device's address on the LAN.
    public var host: String
    /// The UDP port the answer came from.
    public var udpPort: Int

    /// A discovered device as given.
    public init(info: GizwitsDeviceInfo, host: String, udpPort: Int) {
        self.info = info
        self.host = host
        self.udpPort = udpPort
    }
}

/// GAgent discovery (`0x0003` → `0x0004`) over UDP.
public enum GizwitsLANDiscovery {
    /// Sends a discovery request to every target now and then every `interval` (once if nil),
    /// and gives `body` every answer as it comes. Answers are not de-duplicated: a device
    /// answers each round. The sockets close when `body` returns.
    ///
    /// The answers' stream throws `TetherError.Code.bindFailed` when a local socket cannot be
    /// opened.
    public static func withResponses<Result: Sendable>(
        targets: [LANEndpoint],
        interval: Duration?,
        bindHost: String = "0.0.0.0",
        group: (any EventLoopGroup)? = nil,
        _ body: (AsyncThrowingStream<GizwitsDiscoveredDevice, any Error>) async throws -> Result
    ) async throws -> Result {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GizwitsDiscoveredDevice.self)
        let group = group ?? MultiThreadedEventLoopGroup.singleton
        return try await withThrowingTaskGroup(of: Void.self) { probes in
            probes.addTask {
                do {
                    try await run(targets: targets, interval: interval, bindHost: bindHost, group: group, continuation: continuation)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            defer { probes.cancelAll() }
            return try await body(stream)
        }
    }

    /// Collects the devices that answer within `timeout`, one entry per MAC.
    public static func discover(targets: [LANEndpoint], timeout: Duration, group: (any EventLoopGroup)? = nil) async throws -> [GizwitsDiscoveredDevice] {
        try await withResponses(targets: targets, interval: .milliseconds(500), group: group) { answers in
            try await withThrowingTaskGroup(of: [GizwitsDiscoveredDevice]?.self) { reading in
                reading.addTask {
                    var found: [[UInt8]: GizwitsDiscoveredDevice] = [:]
                    var order: [[UInt8]] = []
                    // Ends when cancelled, with what came until then; a bind failure throws.
                    for try await device in answers where found.updateValue(device, forKey: device.info.mac) == nil {
                        order.append(device.info.mac)
                    }
                    return order.compactMap { found[$0] }
                }
                reading.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
                while let result = try await reading.next() {
                    reading.cancelAll()
                    if let devices = result { return devices }
                }
                return []
            }
        }
    }

    /// One socket per target, so that a target the network cannot reach (NIO closes a datagram
    /// socket on such a send error) does not silence the others; a closed socket is reopened
    /// on the next round.
    private static func run(
        targets: [LANEndpoint],
        interval: Duration?,
        bindHost: String,
        group: any EventLoopGroup,
        continuation: AsyncThrowingStream<GizwitsDiscoveredDevice, any Error>.Continuation
    ) async throws {
        var addresses: [SocketAddress] = []
        for target in targets {
            do {
                addresses.append(try SocketAddress.makeAddressResolvingHost(target.host, port: target.port))
            } catch {
                throw TetherError(.invalidArgument, "discovery target \(target) is not a valid address")
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for address in addresses {
                tasks.addTask {
                    repeat {
                        let channel = try await bind(bindHost, group: group)
                        try await probe(address, on: channel, interval: interval, continuation: continuation)
                        guard let interval else { return }
                        try await Task.sleep(for: interval)
                    } while true
                }
            }
            try await tasks.waitForAll()
        }
    }

    private static func bind(
        _ host: String, group: any EventLoopGroup
    ) async throws -> NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>> {
        do {
            return try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_broadcast), value: 1)
                .bind(host: host, port: 0) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw TetherError(.bindFailed, "cannot open a UDP socket for discovery on \(host): \(error)")
        }
    }

    /// Probes `address` every `interval` (once if nil) and yields the answers until cancelled or
    /// until the socket closes after a send error.
    private static func probe(
        _ address: SocketAddress,
        on channel: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>,
        interval: Duration?,
        continuation: AsyncThrowingStream<GizwitsDiscoveredDevice, any Error>.Continuation
    ) async throws {
        let request = GizwitsLANMessage.discoveryRequest.frame.bytes
        try await channel.executeThenClose { inbound, outbound in
            do {
                try await outbound.write(AddressedEnvelope(remoteAddress: address, data: request))
            } catch {
                return
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let interval {
                    group.addTask {
                        while true {
                            try await Task.sleep(for: interval)
                            do { try await outbound.write(AddressedEnvelope(remoteAddress: address, data: request)) } catch { return }
                        }
                    }
                }
                group.addTask {
                    for try await datagram in inbound {
                        guard let frame = try? GizwitsLANFrame.read(datagram: datagram.data),
                            case .discoveryResponse(let info)? = try? GizwitsLANMessage(frame: frame),
                            let host = datagram.remoteAddress.ipAddress, let port = datagram.remoteAddress.port
                        else { continue }
                        continuation.yield(GizwitsDiscoveredDevice(info: info, host: host, udpPort: port))
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

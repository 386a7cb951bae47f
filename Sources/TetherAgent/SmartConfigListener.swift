public import Logging
import NIOCore
import NIOPosix
public import TetherCore
public import TetherProvisioning

/// Where a simulated device "sniffs" smart-config datagrams and where it answers.
public struct SmartConfigListenerConfiguration: Sendable {
    /// The address and UDP port the phone's datagrams arrive on (on the air: any; simulated:
    /// ESP-Touch's 7001, AirKiss's 10000, or a port of the test's choosing).
    public var host: String
    public var port: Int
    /// Overrides the acknowledgement's port (ESP-Touch v1: 18266; v2: the app port the head
    /// names; AirKiss: 10000), so that tests on one machine need no fixed port.
    public var acknowledgementPort: Int?
    /// The device's key for ESP-Touch v2's encrypted data.
    public var espTouchV2Key: [UInt8]?

    public init(host: String = "0.0.0.0", port: Int = ESPTouchV1.port, acknowledgementPort: Int? = nil, espTouchV2Key: [UInt8]? = nil) {
        self.host = host
        self.port = port
        self.acknowledgementPort = acknowledgementPort
        self.espTouchV2Key = espTouchV2Key
    }
}

/// A device in smart-config mode (§5–§7): the lengths of the datagrams that reach it go to the
/// three decoders; the first to rebuild the credentials gives them to the device, which leaves
/// onboarding mode and answers as that encoding's devices do. On loopback the "frame overhead"
/// is zero; the decoders learn it either way.
public final class SmartConfigListener: Sendable {
    public let device: VirtualDevice
    public let configuration: SmartConfigListenerConfiguration
    private let logger: Logger
    private let bound = AsyncPromise<Int, TetherError>()

    public init(device: VirtualDevice, configuration: SmartConfigListenerConfiguration, logger: Logger = Logger(label: "tether.agent.smartconfig")) {
        self.device = device
        self.configuration = configuration
        self.logger = logger
    }

    /// The UDP port, once listening.
    public func port() async throws(TetherError) -> Int {
        try await bound.value(ifCancelled: { TetherError(.cancelled, "stopped waiting for the smart-config socket") })
    }

    /// Listens until the device has its credentials (then answers and returns), or until cancelled.
    public func run() async throws {
        let udp: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>
        do {
            udp = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .channelOption(.socketOption(.so_broadcast), value: 1)
                .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            let failure = TetherError(.bindFailed, "cannot listen on UDP \(configuration.host):\(configuration.port): \(error)")
            bound.resolve(.failure(failure))
            throw failure
        }
        bound.resolve(.success(udp.channel.localAddress?.port ?? configuration.port))
        let configuration = self.configuration
        try await udp.executeThenClose { inbound, outbound in
            var v1 = ESPTouchV1Decoder()
            var v2 = ESPTouchV2Decoder(aesKey: configuration.espTouchV2Key)
            var airKiss = AirKissDecoder()
            for try await envelope in inbound {
                let length = envelope.data.readableBytes
                let source = envelope.remoteAddress
                var answer: (ssid: [UInt8], password: [UInt8], to: SocketAddress, payload: [UInt8], repeats: Int)?
                let mac = device.identity.mac
                if let result = v1.feed(frameLength: length), let ssid = result.ssid {
                    let target = try SocketAddress(
                        ipAddress: result.phoneIP.map(String.init).joined(separator: "."),
                        port: configuration.acknowledgementPort ?? ESPTouchV1.acknowledgementPort)
                    // The device's own address in the answer: the one it listens on, or (listening on
                    // every address) the one it reaches the phone from.
                    var ip = Self.ipv4(configuration.host)
                    if ip == [0, 0, 0, 0], let local = await Self.localAddress(toward: target) { ip = local }
                    let payload = SmartConfigAcknowledgement.espTouchV1(ssidLength: ssid.count, passwordLength: result.password.count, mac: mac, ip: ip)
                    answer = (ssid, result.password, target, payload, 10)
                } else if let result = v2.feed(frameLength: length) {
                    let port = configuration.acknowledgementPort ?? ESPTouchV2.appPorts[result.portMark]
                    answer = (result.ssid, result.password, try source.withPort(port), SmartConfigAcknowledgement.espTouchV2(mac: mac), 10)
                } else if let result = airKiss.feed(frameLength: length) {
                    let port = configuration.acknowledgementPort ?? AirKiss.port
                    answer = (result.ssid, result.password, try source.withPort(port), SmartConfigAcknowledgement.airKiss(random: result.random), 20)
                }
                if let failure = v2.failure {
                    logger.notice("ESP-Touch v2 data that this device cannot decrypt", metadata: ["tether.error": "\(failure)"])
                    v2 = ESPTouchV2Decoder(aesKey: configuration.espTouchV2Key)
                }
                guard let answer else { continue }
                let ssid = String(decoding: answer.ssid, as: UTF8.self)
                guard device.configureWiFi(ssid: ssid, key: String(decoding: answer.password, as: UTF8.self), maximumKeyLength: 64) else {
                    logger.notice("smart config credentials refused", metadata: ["tether.ssid": "\(ssid)"])
                    continue
                }
                logger.info("smart config: network received", metadata: ["tether.ssid": "\(ssid)"])
                for _ in 0..<answer.repeats {
                    try await outbound.write(AddressedEnvelope(remoteAddress: answer.to, data: ByteBuffer(bytes: answer.payload)))
                }
                return
            }
        }
    }
}

extension SmartConfigListener {
    /// The local IPv4 address datagrams to `target` leave from (nothing is sent).
    static func localAddress(toward target: SocketAddress) async -> [UInt8]? {
        guard
            let channel = try? await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(to: target).get()
        else { return nil }
        defer { channel.close(promise: nil) }
        let parts = (channel.localAddress?.ipAddress ?? "").split(separator: ".").compactMap { UInt8($0) }
        return parts.count == 4 ? parts : nil
    }

    /// The device's address as four bytes (0.0.0.0 when it listens on every address).
    static func ipv4(_ text: String) -> [UInt8] {
        let parts = text.split(separator: ".").compactMap { UInt8($0) }
        return parts.count == 4 ? parts : [0, 0, 0, 0]
    }
}

extension SocketAddress {
    fileprivate func withPort(_ port: Int) throws -> SocketAddress {
        guard let ip = ipAddress else { throw TetherError(.invalidArgument, "the phone's datagram has no IP source address") }
        return try SocketAddress(ipAddress: ip, port: port)
    }
}

import Logging
import NIOCore
import NIOPosix
import TetherCore
public import TetherProvisioning

/// Which smart-config encoding carries the credentials.
public enum SmartConfigEncoding: String, Sendable, Hashable, CaseIterable {
    case espTouchV1 = "esptouch-v1"
    case espTouchV2 = "esptouch-v2"
    case airKiss = "airkiss"

    /// The UDP port the datagrams go to.
    public var port: Int { self == .airKiss ? AirKiss.port : ESPTouchV1.port }
}

/// How a smart-config attempt sends and listens. Defaults are the vendors' apps'.
///
/// The phone must be on the network the device should join (2.4 GHz). On iOS, sending
/// broadcast UDP needs the multicast networking entitlement (`com.apple.developer.networking.multicast`)
/// and the user's local-network permission: without them nothing reaches the air and the attempt
/// times out (or, when the system refuses the socket, fails at `preparing` with `bindFailed`).
public struct SmartConfigOptions: Sendable {
    public var encoding: SmartConfigEncoding
    /// Where the datagrams go; nil: `255.255.255.255` at the encoding's port.
    public var target: LANEndpoint?
    /// ESP-Touch v1: the phone's IPv4 address, where the device answers.
    public var phoneIP: [UInt8]
    /// The local address to send from and listen on.
    public var listenHost: String
    /// The acknowledgement's port; nil: the encoding's (ESP-Touch v1 18266, v2 the app port, AirKiss 10000).
    public var acknowledgementPort: Int?
    /// ESP-Touch v1: leave the SSID out (legacy encoders, visible networks).
    public var ssidVisible: Bool
    /// ESP-Touch v2: custom data, AES key, app port.
    public var espTouchV2: ESPTouchV2.Options
    /// AirKiss: the random byte; nil draws one.
    public var airKissRandom: UInt8?
    /// Time between datagrams; nil: the apps' pace (ESP-Touch v1 8 ms, v2 15 ms, AirKiss 4 ms).
    public var interval: Duration?
    /// How long to keep sending before giving up.
    public var timeout: Duration

    public init(
        encoding: SmartConfigEncoding, target: LANEndpoint? = nil, phoneIP: [UInt8] = [0, 0, 0, 0], listenHost: String = "0.0.0.0",
        acknowledgementPort: Int? = nil, ssidVisible: Bool = false, espTouchV2: ESPTouchV2.Options = .init(), airKissRandom: UInt8? = nil,
        interval: Duration? = nil, timeout: Duration = .seconds(60)
    ) {
        self.encoding = encoding
        self.target = target
        self.phoneIP = phoneIP
        self.listenHost = listenHost
        self.acknowledgementPort = acknowledgementPort
        self.ssidVisible = ssidVisible
        self.espTouchV2 = espTouchV2
        self.airKissRandom = airKissRandom
        self.interval = interval
        self.timeout = timeout
    }

    var pace: Duration {
        interval
            ?? {
                switch encoding {
                case .espTouchV1: .milliseconds(8)
                case .espTouchV2: .milliseconds(15)
                case .airKiss: .milliseconds(4)
                }
            }()
    }

    var answerPort: Int {
        acknowledgementPort
            ?? {
                switch encoding {
                case .espTouchV1: ESPTouchV1.acknowledgementPort
                case .espTouchV2: ESPTouchV2.appPorts[espTouchV2.portMark]
                case .airKiss: AirKiss.port
                }
            }()
    }
}

/// A device that took the credentials.
public struct SmartConfigResult: Sendable, Hashable {
    /// `ac:cf:23:50:d4:46`, when the encoding's answer carries it (ESP-Touch).
    public var mac: String?
    /// The device's address on the network.
    public var ip: String
    public var trace: OnboardingTrace
}

/// Smart-config onboarding (AirLink: ESP-Touch v1/v2, AirKiss): sends the credentials as datagram
/// lengths, cycle after cycle, until the device answers or the timeout.
public enum SmartConfig {
    /// - Parameter progress: each step as it starts.
    /// - Throws: ``OnboardingFailure`` naming the step: `preparing` (`bindFailed`, `invalidArgument`),
    ///   `sending_credentials` (`connectionFailed`: the network refused the datagrams), or
    ///   `device_acknowledged` (`timeout`: no device answered).
    public static func run(
        _ credentials: SmartConfigCredentials, options: SmartConfigOptions, progress: @escaping @Sendable (OnboardingStep) -> Void = { _ in }
    ) async throws(OnboardingFailure) -> SmartConfigResult {
        try await run(credentials, options: options, progress: progress, recorder: OnboardingRecorder(mode: "airlink-\(options.encoding.rawValue)"))
    }

    static func run(
        _ credentials: SmartConfigCredentials, options: SmartConfigOptions, progress: @escaping @Sendable (OnboardingStep) -> Void, recorder: OnboardingRecorder
    ) async throws(OnboardingFailure) -> SmartConfigResult {
        func fail(_ step: OnboardingStep, _ error: TetherError) -> OnboardingFailure {
            OnboardingFailure(
                step: step, error: error, trace: recorder.finish("failed", ["step": .string(step.rawValue), "code": .int(Int64(error.code.rawValue))]))
        }
        progress(.preparing)
        recorder.record(
            "start",
            [
                "encoding": .string(options.encoding.rawValue), "ssid_bytes": .int(Int64(credentials.ssid.count)),
                "password_bytes": .int(Int64(credentials.password.count)), "answer_port": .int(Int64(options.answerPort)),
            ])
        let target = options.target ?? LANEndpoint(host: "255.255.255.255", port: options.encoding.port)
        var resolved = options
        if resolved.encoding == .espTouchV1, resolved.phoneIP == [0, 0, 0, 0] {
            // The device answers to the address in the data: this phone's on the way to the target.
            guard let ip = await Self.localAddress(toward: target) else {
                throw fail(.preparing, TetherError(.bindFailed, "cannot tell this phone's address toward \(target); give SmartConfigOptions.phoneIP"))
            }
            resolved.phoneIP = ip
            recorder.record("phone_address", ["ip": .string(ip.map(String.init).joined(separator: "."))])
        }
        let options = resolved
        let cycle: [Int]
        let random = options.airKissRandom ?? UInt8.random(in: 0...126)
        do throws(TetherError) {
            cycle = try Self.cycle(credentials, options: options, random: random)
        } catch {
            throw fail(.preparing, error)
        }
        let sockets: (send: any Channel, answers: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, Never>)
        do {
            sockets = try await Self.open(listenHost: options.listenHost, answerPort: options.answerPort)
        } catch {
            throw fail(.preparing, TetherError(.bindFailed, "cannot open the smart-config sockets on \(options.listenHost): \(error)"))
        }
        recorder.record("sockets_open", ["target": .string(target.description), "cycle_datagrams": .int(Int64(cycle.count))])
        progress(.sendingCredentials)
        let outcome = await withTaskGroup(of: Result<(mac: String?, ip: String), TetherError>?.self) { group in
            group.addTask {
                do throws(TetherError) {
                    try await Self.send(cycle, to: target, on: sockets.send, pace: options.pace, recorder: recorder)
                    return nil
                } catch {
                    return .failure(error)
                }
            }
            let ownPort = sockets.send.localAddress?.port
            group.addTask {
                await Self.answer(
                    on: sockets.answers, ignoring: ownPort, credentials: credentials, encoding: options.encoding, random: random, recorder: recorder)
            }
            group.addTask {
                try? await Task.sleep(for: options.timeout)
                return .failure(TetherError(.timeout, "no device answered within \(options.timeout)"))
            }
            var first: Result<(mac: String?, ip: String), TetherError>?
            while let next = await group.next() {
                if let next {
                    first = next
                    break
                }
            }
            group.cancelAll()
            return first ?? .failure(TetherError(.cancelled, "the attempt was cancelled"))
        }
        try? await sockets.send.close()
        switch outcome {
        case .success(let device):
            progress(.deviceAcknowledged)
            let trace = recorder.finish("acknowledged", ["ip": .string(device.ip), "mac": device.mac.map(JSONValue.string) ?? .null])
            return SmartConfigResult(mac: device.mac, ip: device.ip, trace: trace)
        case .failure(let error):
            throw fail(error.code == .timeout || error.code == .cancelled ? .deviceAcknowledged : .sendingCredentials, error)
        }
    }

    /// One cycle of datagram lengths for the encoding.
    static func cycle(_ credentials: SmartConfigCredentials, options: SmartConfigOptions, random: UInt8) throws(TetherError) -> [Int] {
        switch options.encoding {
        case .espTouchV1:
            // The guide for about 2 s at the pace, then the data code.
            let guideRepeats = max(3, Int(2_000 / max(1, options.pace.milliseconds * 4)))
            let datum = try ESPTouchV1.datum(credentials, phoneIP: options.phoneIP, hidden: !options.ssidVisible)
            return Array(repeating: ESPTouchV1.guide, count: guideRepeats).flatMap { $0 } + datum
        case .espTouchV2:
            return try ESPTouchV2.packets(credentials, options: options.espTouchV2)
        case .airKiss:
            return try AirKiss.lengths(credentials, random: random)
        }
    }

    /// The local IPv4 address a datagram to `target` would leave from (no datagram is sent).
    static func localAddress(toward target: LANEndpoint) async -> [UInt8]? {
        guard
            let channel = try? await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.so_broadcast), value: 1)
                .connect(host: target.host, port: target.port).get()
        else { return nil }
        defer { channel.close(promise: nil) }
        guard let text = channel.localAddress?.ipAddress else { return nil }
        let parts = text.split(separator: ".").compactMap { UInt8($0) }
        return parts.count == 4 && parts != [0, 0, 0, 0] ? parts : nil
    }

    private static func open(
        listenHost: String, answerPort: Int
    ) async throws -> (send: any Channel, answers: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, Never>) {
        let answers = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: listenHost, port: answerPort) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, Never>(wrappingChannelSynchronously: channel)
                }
            }
        do {
            let send = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.so_broadcast), value: 1)
                .bind(host: listenHost, port: 0).get()
            return (send, answers)
        } catch {
            try? await answers.executeThenClose { _ in }
            throw error
        }
    }

    /// Sends the cycle over and over until cancelled. The payloads are filler: only their lengths count.
    private static func send(
        _ cycle: [Int], to target: LANEndpoint, on channel: any Channel, pace: Duration, recorder: OnboardingRecorder
    )
        async throws(TetherError)
    {
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
        } catch {
            throw TetherError(.connectionFailed, "cannot resolve \(target.host)")
        }
        // Above 126, so never AirKiss's random byte: our own broadcasts, looped back to the answer
        // port, must not count as the device's answer.
        let filler = ByteBuffer(repeating: 0xFF, count: (cycle.max() ?? 0) + 1)
        var rounds = 0
        while !Task.isCancelled {
            for length in cycle {
                if Task.isCancelled { return }
                guard let payload = filler.getSlice(at: 0, length: length) else { continue }
                do {
                    try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: payload))
                } catch let io as IOError where UDPSocket.deniedErrnos.contains(io.errnoCode) {
                    throw TetherError(
                        .localNetworkDenied,
                        "the system refused the app the local network (\(io)): on iOS, smart config needs the local-network permission and the com.apple.developer.networking.multicast entitlement"
                    )
                } catch {
                    throw TetherError(.connectionFailed, "the network refused a smart-config datagram: \(error)")
                }
                if pace > .zero {
                    do { try await Task.sleep(for: pace) } catch { return }
                } else {
                    await Task.yield()
                }
            }
            rounds += 1
            recorder.record("cycle_sent", ["round": .int(Int64(rounds)), "datagrams": .int(Int64(cycle.count))])
            // Between cycles, even at full speed, so that a device reading slower than we send
            // catches up (on the air, frames are lost rather than queued).
            do { try await Task.sleep(for: .milliseconds(pace > .zero ? 100 : 20)) } catch { return }
        }
    }

    /// The first answer that is this encoding's acknowledgement for these credentials.
    private static func answer(
        on socket: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, Never>, ignoring ownPort: Int?, credentials: SmartConfigCredentials,
        encoding: SmartConfigEncoding, random: UInt8, recorder: OnboardingRecorder
    ) async -> Result<(mac: String?, ip: String), TetherError>? {
        var counter = SmartConfigAcknowledgement.AirKissCounter(random: random)
        do {
            return try await socket.executeThenClose { inbound in
                for try await envelope in inbound {
                    // Our own datagrams, when the answer port is also where we send (AirKiss).
                    if let ownPort, envelope.remoteAddress.port == ownPort { continue }
                    let bytes = Array(envelope.data.readableBytesView)
                    let source = envelope.remoteAddress.ipAddress ?? "?"
                    recorder.record("answer_received", ["from": .string(source), "bytes": .int(Int64(bytes.count))])
                    switch encoding {
                    case .espTouchV1:
                        guard
                            let answer = SmartConfigAcknowledgement.readESPTouchV1(
                                bytes, ssidLength: credentials.ssid.count, passwordLength: credentials.password.count)
                        else { continue }
                        return .success((MACAddress.display(answer.mac), answer.ip.map(String.init).joined(separator: ".")))
                    case .espTouchV2:
                        guard let mac = SmartConfigAcknowledgement.readESPTouchV2(bytes) else { continue }
                        return .success((MACAddress.display(mac), source))
                    case .airKiss:
                        guard counter.add(bytes) else { continue }
                        return .success((nil, source))
                    }
                }
                return nil
            }
        } catch {
            return nil
        }
    }
}

extension Duration {
    fileprivate var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

import Dispatch
import NIOCore
import NIOPosix
import Synchronization
import TetherMQTT

/// One load-generator connection: the public MQTT codec on a bare NIO channel, without the
/// full client's bookkeeping, so that the generator costs as little as it can.
final class BenchConnection: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: every mutable field is touched on the channel's event loop only.
    typealias InboundIn = MQTTPacket

    struct Stats {
        var received = 0
        var latencies: [UInt32] = []
        var errors = 0
    }

    let version: MQTTVersion
    let connected: EventLoopPromise<Void>
    let subscribed: EventLoopPromise<Void>
    /// Subscriber side: counts arrivals and records latency (µs) while `recording` is set.
    let stats: Mutex<Stats>
    let recording: Atomic<Bool>
    var onAcknowledged: (() -> Void)?

    init(version: MQTTVersion, eventLoop: any EventLoop) {
        self.version = version
        connected = eventLoop.makePromise()
        subscribed = eventLoop.makePromise()
        stats = Mutex(Stats())
        recording = Atomic(false)
    }

    static func open(
        host: String, port: Int, version: MQTTVersion, clientID: String, keepAlive: UInt16, group: any EventLoopGroup
    ) async throws -> (any Channel, BenchConnection) {
        let eventLoop = group.next()
        let handler = BenchConnection(version: version, eventLoop: eventLoop)
        let channel = try await ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(MQTTPacketDecoder(version: version, maximumPacketSize: 1 << 24)),
                        handler,
                    ])
                }
            }
            .connect(host: host, port: port)
            .get()
        let connect = try MQTTPacket.connect(MQTTConnect(version: version, clientID: clientID, keepAlive: keepAlive)).bytes(version: version)
        try await channel.writeAndFlush(connect)
        try await handler.connected.futureResult.get()
        return (channel, handler)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .connack(let connack):
            if connack.reasonCode.isFailure {
                connected.fail(MQTTError(.connectionRefused, "refused", reasonCode: connack.reasonCode))
            } else {
                connected.succeed()
            }
        case .suback:
            subscribed.succeed()
        case .publish(let publish):
            let now = DispatchTime.now().uptimeNanoseconds
            let sent = publish.payload.getInteger(at: publish.payload.readerIndex, as: UInt64.self) ?? now
            if recording.load(ordering: .relaxed) {
                stats.withLock { stats in
                    stats.received += 1
                    stats.latencies.append(UInt32(clamping: (now &- sent) / 1000))
                }
            }
            if publish.qos == .atLeastOnce, let id = publish.packetID, let ack = try? MQTTPacket.puback(MQTTAck(packetID: id)).bytes(version: version) {
                context.writeAndFlush(NIOAny(ack), promise: nil)
            }
        case .puback:
            onAcknowledged?()
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        stats.withLock { $0.errors += 1 }
        connected.fail(error)
        subscribed.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connected.fail(MQTTError(.connectionClosed, "closed"))
        subscribed.fail(MQTTError(.connectionClosed, "closed"))
    }
}

/// Sends PUBLISH packets on one connection, on its event loop: as fast as the socket takes them
/// (QoS 0), within a window of unacknowledged messages (QoS 1), or at a fixed rate.
final class BenchPublisher: @unchecked Sendable {
    // @unchecked: mutable state is confined to `channel.eventLoop`.
    let channel: any Channel
    let connection: BenchConnection
    let topic: String
    let qos: MQTTQoS
    let payloadSize: Int
    let window: Int
    /// Messages a second; 0 means as fast as possible.
    let rate: Double
    private var inflight = 0
    private var nextID: UInt16 = 1
    private var stopped = false
    private var sent = 0
    private var started = NIODeadline.now()

    init(channel: any Channel, connection: BenchConnection, topic: String, qos: MQTTQoS, payloadSize: Int, window: Int, rate: Double) {
        self.channel = channel
        self.connection = connection
        self.topic = topic
        self.qos = qos
        self.payloadSize = max(8, payloadSize)
        self.window = window
        self.rate = rate
    }

    var sentCount: Int { get async { (try? await channel.eventLoop.submit { self.sent }.get()) ?? 0 } }

    func start() {
        channel.eventLoop.execute {
            self.started = .now()
            self.connection.onAcknowledged = { [unowned self] in
                self.inflight -= 1
                if self.rate == 0 { self.pump() }
            }
            self.pump()
        }
    }

    func stop() async {
        try? await channel.eventLoop.submit { self.stopped = true }.get()
    }

    private func pump() {
        guard !stopped else { return }
        var budget = 256
        if rate > 0 {
            let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e9
            budget = min(budget, Int(elapsed * rate) - sent)
        }
        var wrote = false
        while budget > 0, channel.isWritable, qos == .atMostOnce || inflight < window {
            var buffer = channel.allocator.buffer(capacity: payloadSize + topic.utf8.count + 16)
            var payload = channel.allocator.buffer(capacity: payloadSize)
            payload.writeInteger(DispatchTime.now().uptimeNanoseconds)
            payload.writeRepeatingByte(0x61, count: payloadSize - 8)
            var id: UInt16?
            if qos != .atMostOnce {
                id = nextID
                nextID = nextID == UInt16.max ? 1 : nextID + 1
                inflight += 1
            }
            try? MQTTPacket.publish(MQTTPublish(topic: topic, payload: payload, qos: qos, packetID: id)).write(to: &buffer, version: connection.version)
            channel.write(buffer, promise: nil)
            sent += 1
            budget -= 1
            wrote = true
        }
        if wrote { channel.flush() }
        // Tasks that reschedule themselves at once would starve the event loop's I/O (it runs
        // thousands of tasks before reading again), so the pump comes back on a timer: in 1 ms,
        // or as soon as a QoS 1 acknowledgement opens the window.
        if rate > 0 || qos == .atMostOnce || !channel.isWritable {
            channel.eventLoop.scheduleTask(in: .milliseconds(1)) { self.pump() }
        }
    }
}

import NIOCore
import NIOPosix
import Synchronization
import Testing
import TetherCore
import TetherMQTT

/// A client that speaks MQTT packet by packet, to see exactly what the broker sends.
final class RawMQTTConnection: Sendable {
    private let channel: any Channel
    private let inbox: Inbox
    let version: MQTTVersion

    private static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    private init(channel: any Channel, inbox: Inbox, version: MQTTVersion) {
        self.channel = channel
        self.inbox = inbox
        self.version = version
    }

    /// `receiveBuffer`: the socket's receive buffer in bytes (the kernel's default, which grows
    /// to megabytes, when nil).
    static func connect(port: Int, version: MQTTVersion, receiveBuffer: Int? = nil) async throws -> RawMQTTConnection {
        let inbox = Inbox()
        var bootstrap = ClientBootstrap(group: group)
        if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: .init(receiveBuffer)) }
        let channel = try await bootstrap
            // Half-closed by the broker, it can still send, as a real client's socket can.
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(inbox) } }
            .connect(host: "127.0.0.1", port: port).get()
        return RawMQTTConnection(channel: channel, inbox: inbox, version: version)
    }

    func send(_ packets: [MQTTPacket]) async throws {
        var buffer = ByteBuffer()
        for packet in packets { try packet.write(to: &buffer, version: version) }
        try await channel.writeAndFlush(buffer)
    }

    /// The next packet, or nil when the connection ended first; a failure after `timeout`.
    func next(timeout: Duration = .seconds(5)) async throws -> MQTTPacket? {
        let deadline = ContinuousClock.now + timeout
        while true {
            switch try inbox.take(version: version) {
            case .packet(let packet): return packet
            case .ended: return nil
            case .waiting:
                guard ContinuousClock.now < deadline else { throw MQTTError(.timeout, "no packet within \(timeout)") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// Packets until the connection ends (or `timeout`).
    func rest(timeout: Duration = .seconds(5)) async throws -> [MQTTPacket] {
        var packets: [MQTTPacket] = []
        while let packet = try await next(timeout: timeout) { packets.append(packet) }
        return packets
    }

    func close() async { try? await channel.close() }

    /// Stops (or resumes) reading the socket: what the broker sends waits in the kernel.
    func setReading(_ reading: Bool) async throws {
        try await channel.setOption(.autoRead, value: reading).get()
        if reading { channel.read() }
    }

    private final class Inbox: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        enum Take { case packet(MQTTPacket), waiting, ended }
        private let state = Mutex<(buffer: ByteBuffer, ended: Bool)>((ByteBuffer(), false))

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            state.withLock { _ = $0.buffer.writeBuffer(&bytes) }
        }
        func channelInactive(context: ChannelHandlerContext) { state.withLock { $0.ended = true } }
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { state.withLock { $0.ended = true } }
            context.fireUserInboundEventTriggered(event)
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            state.withLock { $0.ended = true }
            context.close(promise: nil)
        }
        func take(version: MQTTVersion) throws -> Take {
            try state.withLock { state in
                if let packet = try MQTTPacket.read(from: &state.buffer, version: version) { return .packet(packet) }
                return state.ended ? .ended : .waiting
            }
        }
    }
}

@Suite("MQTT broker limits and refusals", .timeLimit(.minutes(1)))
struct MQTTBrokerLimitsTests {
    func withBroker(_ configuration: MQTTBrokerConfiguration, hooks: any MQTTBrokerHooks = MQTTAllowAllHooks(), _ body: (Int) async throws -> Void) async throws {
        let broker = MQTTBroker(configuration: configuration, hooks: hooks)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [.tcp(host: "127.0.0.1", port: 0)]) }
            defer { group.cancelAll() }
            try await body(try await broker.addresses().first!.port!)
        }
    }

    func connack(_ connection: RawMQTTConnection, keepAlive: UInt16, properties: MQTTProperties = []) async throws -> MQTTConnAck {
        try await connection.send([.connect(MQTTConnect(version: connection.version, clientID: "c-\(UInt32.random(in: 0...UInt32.max))", keepAlive: keepAlive, properties: properties))])
        guard case .connack(let connack)? = try await connection.next() else { throw MQTTError(.protocolError, "no CONNACK") }
        return connack
    }

    @Test("max keep-alive: a v5 client is told the server's; a 3.1.1 client asking for more is refused, one asking for none is let in")
    func keepAlive() async throws {
        try await withBroker(MQTTBrokerConfiguration(maximumKeepAlive: 60)) { port in
            for asked: UInt16 in [120, 0] {
                let v5 = try await RawMQTTConnection.connect(port: port, version: .v5)
                let answer = try await connack(v5, keepAlive: asked)
                #expect(answer.reasonCode == .success)
                #expect(answer.properties.serverKeepAlive == 60, "asked \(asked)")
                await v5.close()
            }
            let within = try await RawMQTTConnection.connect(port: port, version: .v5)
            #expect(try await connack(within, keepAlive: 30).properties.serverKeepAlive == nil)
            let refused = try await RawMQTTConnection.connect(port: port, version: .v311)
            #expect(try await connack(refused, keepAlive: 120).reasonCode.v311ConnectReturnCode == 2)
            #expect(try await refused.next() == nil, "closed after the refusal")
            let none = try await RawMQTTConnection.connect(port: port, version: .v311)
            #expect(try await connack(none, keepAlive: 0).reasonCode == .success)
        }
    }

    @Test("topic aliases towards a client that accepts them: defined once, then the alias alone; none beyond its maximum")
    func outgoingAliases() async throws {
        try await withBroker(MQTTBrokerConfiguration(outgoingTopicAliasMaximum: 10)) { port in
            let subscriber = try await RawMQTTConnection.connect(port: port, version: .v5)
            _ = try await connack(subscriber, keepAlive: 60, properties: [.topicAliasMaximum(2)])
            try await subscriber.send([.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "t/#")]))])
            guard case .suback? = try await subscriber.next() else { Issue.record("no SUBACK"); return }
            let publisher = try await RawMQTTConnection.connect(port: port, version: .v5)
            _ = try await connack(publisher, keepAlive: 60)
            let topics = ["t/a", "t/a", "t/b", "t/c", "t/a", "t/c"]
            try await publisher.send(topics.map { .publish(MQTTPublish(topic: $0, payload: ByteBuffer(string: $0))) })
            var received: [(topic: String, alias: UInt16?, payload: String)] = []
            for _ in topics {
                guard case .publish(let publish)? = try await subscriber.next() else { Issue.record("no PUBLISH"); return }
                received.append((publish.topic, publish.properties.topicAlias, String(buffer: publish.payload)))
            }
            #expect(received.map(\.payload) == topics)
            #expect(received.map(\.topic) == ["t/a", "", "t/b", "t/c", "", "t/c"])
            #expect(received.map(\.alias) == [1, 1, 2, nil, 1, nil])
            // A client that did not offer aliases gets whole topics.
            let plain = try await RawMQTTConnection.connect(port: port, version: .v5)
            _ = try await connack(plain, keepAlive: 60)
            try await plain.send([.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "t/#")]))])
            _ = try await plain.next()
            try await publisher.send([.publish(MQTTPublish(topic: "t/a", payload: ByteBuffer(string: "x")))])
            guard case .publish(let whole)? = try await plain.next() else { Issue.record("no PUBLISH"); return }
            #expect(whole.topic == "t/a" && whole.properties.topicAlias == nil)
        }
    }

    @Test("a subscriber that stops reading slows its publisher down but never stalls it: another subscriber gets every message")
    func stuckSubscriber() async throws {
        try await withBroker(MQTTBrokerConfiguration()) { port in
            func subscriber(receiveBuffer: Int? = nil) async throws -> RawMQTTConnection {
                let connection = try await RawMQTTConnection.connect(port: port, version: .v311, receiveBuffer: receiveBuffer)
                _ = try await connack(connection, keepAlive: 0)
                try await connection.send([.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "load/#")]))])
                guard case .suback? = try await connection.next() else { throw MQTTError(.protocolError, "no SUBACK") }
                return connection
            }
            let stuck = try await subscriber(receiveBuffer: 4_096)
            try await stuck.setReading(false)
            let reader = try await subscriber()
            let publisher = try await RawMQTTConnection.connect(port: port, version: .v311)
            _ = try await connack(publisher, keepAlive: 0)
            // About 4 MB: more than the stuck client's small socket and the broker's send buffer
            // take (about 3 MB here), so its queue backs up and the publisher is paused again and
            // again, each time for at most the broker's limit.
            let count = 4_000
            let payload = ByteBuffer(repeating: 0x61, count: 1_024)
            try await publisher.send((0..<count).map { .publish(MQTTPublish(topic: "load/\($0)", payload: payload)) })
            var received = 0
            while received < count {
                guard case .publish(let message)? = try await reader.next(timeout: .seconds(20)) else { break }
                #expect(message.topic == "load/\(received)")
                received += 1
            }
            #expect(received == count)
            await stuck.close()
            await reader.close()
            await publisher.close()
        }
    }

    /// Every client is who its user name says.
    struct TrustUserNames: MQTTBrokerHooks {
        func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
            .accepted(MQTTPrincipal(clientID: request.clientID, username: request.username))
        }
    }

    @Test("a client id holding a session of one user is refused to another: neither its messages nor its session can be taken")
    func sessionOwnership() async throws {
        try await withBroker(MQTTBrokerConfiguration(), hooks: TrustUserNames()) { port in
            func open(_ user: String) async throws -> (RawMQTTConnection, MQTTConnAck) {
                let connection = try await RawMQTTConnection.connect(port: port, version: .v311)
                try await connection.send([.connect(MQTTConnect(version: .v311, clientID: "shared-id", cleanStart: false, keepAlive: 60, username: user))])
                guard case .connack(let connack)? = try await connection.next() else { throw MQTTError(.protocolError, "no CONNACK") }
                return (connection, connack)
            }
            let (alice, _) = try await open("alice")
            try await alice.send([.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "alice/#", qos: .atLeastOnce)]))])
            _ = try await alice.next()
            await alice.close()
            let publisher = try await RawMQTTConnection.connect(port: port, version: .v311)
            _ = try await connack(publisher, keepAlive: 60)
            try await publisher.send([.publish(MQTTPublish(topic: "alice/mail", payload: ByteBuffer(string: "for alice"), qos: .atLeastOnce, packetID: 1))])
            _ = try await publisher.next()
            let (mallory, refused) = try await open("mallory")
            #expect(refused.reasonCode.v311ConnectReturnCode == 2)
            #expect(try await mallory.next() == nil, "closed, nothing of alice's sent")
            let (back, resumed) = try await open("alice")
            #expect(resumed.sessionPresent)
            guard case .publish(let mail)? = try await back.next() else { Issue.record("alice's message is gone"); return }
            #expect(String(buffer: mail.payload) == "for alice")
        }
    }

    struct DenyEverything: MQTTBrokerHooks {
        func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool { false }
        func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool { false }
    }

    @Test("a refusal is 0x87 (not authorized) or, if configured, 0x80 (unspecified)", arguments: [true, false])
    func refusalReason(reveals: Bool) async throws {
        try await withBroker(MQTTBrokerConfiguration(revealsRefusalReason: reveals), hooks: DenyEverything()) { port in
            let client = try await RawMQTTConnection.connect(port: port, version: .v5)
            _ = try await connack(client, keepAlive: 60)
            try await client.send([
                .subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "a")])),
                .publish(MQTTPublish(topic: "a", payload: ByteBuffer(), qos: .atLeastOnce, packetID: 2)),
            ])
            let expected: MQTTReasonCode = reveals ? .notAuthorized : .unspecifiedError
            guard case .suback(let suback)? = try await client.next() else { Issue.record("no SUBACK"); return }
            #expect(suback.reasonCodes == [expected])
            guard case .puback(let puback)? = try await client.next() else { Issue.record("no PUBACK"); return }
            #expect(puback.reasonCode == expected)
        }
    }

    @Test("over the receive maximum: the client still reads the DISCONNECT 0x93 while it goes on sending (a lingering close, no reset)")
    func receiveMaximumDisconnect() async throws {
        try await withBroker(MQTTBrokerConfiguration(receiveMaximum: 20)) { port in
            let client = try await RawMQTTConnection.connect(port: port, version: .v5)
            _ = try await connack(client, keepAlive: 60)
            // A client that reads slowly, as paho's test client does: what the broker answers
            // is still unread when the client sends its next packet, after the broker closed.
            try await client.setReading(false)
            try await client.send((1...21).map { .publish(MQTTPublish(topic: "q", payload: ByteBuffer(string: "\($0)"), qos: .exactlyOnce, packetID: UInt16($0))) })
            try await Task.sleep(for: .milliseconds(300))
            // A socket closed outright would answer the first with a reset and fail the second
            // (the paho suite's client then dies on ConnectionResetError); a lingering close reads them.
            try await client.send([.pubrel(MQTTAck(packetID: 1))])
            try await Task.sleep(for: .milliseconds(100))
            try await client.send([.pubrel(MQTTAck(packetID: 2))])
            try await client.setReading(true)
            var disconnect: MQTTReasonCode?
            while let packet = try await client.next() {
                switch packet {
                case .pubrec(let ack): try? await client.send([.pubrel(MQTTAck(packetID: ack.packetID))])
                case .disconnect(let packet): disconnect = packet.reasonCode
                default: break
                }
            }
            #expect(disconnect == .receiveMaximumExceeded)
        }
    }

    @Test("with an ACL, a broad subscription carries only what its client may read")
    func deliveryChecks() async throws {
        let security = try ACLOnlySecurity(acl: MQTTAccessControlList(parsing: "topic readwrite #\ntopic deny secret/#"))
        try await withBroker(MQTTBrokerConfiguration(), hooks: security) { port in
            let subscriber = try await RawMQTTConnection.connect(port: port, version: .v311)
            _ = try await connack(subscriber, keepAlive: 60)
            try await subscriber.send([.subscribe(MQTTSubscribe(packetID: 1, subscriptions: [MQTTTopicSubscription(filter: "#")]))])
            guard case .suback(let suback)? = try await subscriber.next() else { Issue.record("no SUBACK"); return }
            #expect(suback.reasonCodes == [.success])
            let publisher = try await RawMQTTConnection.connect(port: port, version: .v311)
            _ = try await connack(publisher, keepAlive: 60)
            try await publisher.send([
                .publish(MQTTPublish(topic: "secret/plans", payload: ByteBuffer(string: "no"))),
                .publish(MQTTPublish(topic: "news", payload: ByteBuffer(string: "yes"))),
            ])
            guard case .publish(let first)? = try await subscriber.next() else { Issue.record("no PUBLISH"); return }
            #expect(first.topic == "news")
        }
    }
}

/// MQTTFileSecurity's decisions for an ACL given as a value.
struct ACLOnlySecurity: MQTTBrokerHooks {
    let acl: MQTTAccessControlList
    var checksDeliveries: Bool { true }
    func authorizePublish(_ principal: MQTTPrincipal, topic: String) -> Bool {
        acl.mayPublish(username: principal.username, clientID: principal.clientID, topic: topic)
    }
    func authorizeSubscribe(_ principal: MQTTPrincipal, filter: String) -> Bool {
        acl.maySubscribe(username: principal.username, clientID: principal.clientID, filter: filter)
    }
    func authorizeDelivery(_ principal: MQTTPrincipal, topic: String) -> Bool {
        acl.mayReceive(username: principal.username, clientID: principal.clientID, topic: topic)
    }
}

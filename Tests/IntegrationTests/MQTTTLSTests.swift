import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TetherMQTT
import TetherTestSupport

/// TLS with a test CA (`Tests/Fixtures/tls/`).
@Suite("MQTT over TLS", .timeLimit(.minutes(1)))
struct MQTTTLSTests {
    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: Fixtures.root.appendingPathComponent("Tests/Fixtures/tls/\(name)"), encoding: .utf8)
    }

    static func clientTLS(trusting ca: String) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(try fixture(ca).utf8)))
        return configuration
    }

    static func startTLSMosquitto() throws -> Mosquitto {
        try Mosquitto(
            extraConfiguration: "cafile $DIR/ca.pem\ncertfile $DIR/server.pem\nkeyfile $DIR/server.key",
            files: ["ca.pem": try fixture("ca.pem"), "server.pem": try fixture("server.pem"), "server.key": try fixture("server.key")]
        )
    }

    @Test("the client talks to mosquitto over TLS when it trusts the test CA", .enabled(if: Mosquitto.available, "mosquitto is not installed"))
    func trusted() async throws {
        let broker = try Self.startTLSMosquitto()
        let configuration = MQTTClientConfiguration(host: "localhost", port: broker.port, transport: try .tls(Self.clientTLS(trusting: "ca.pem")), reconnect: nil)
        try await MQTTClient.withClient(configuration: configuration) { client in
            try await client.subscribe(to: [MQTTTopicSubscription(filter: "tls/#", qos: .atLeastOnce)]) { messages in
                try await client.publish(MQTTMessage(topic: "tls/x", payload: "secret", qos: .atLeastOnce))
                var iterator = messages.makeAsyncIterator()
                #expect(await iterator.next()?.payloadString == "secret")
            }
        }
    }

    @Test("a server signed by another CA is refused with a TLS error", .enabled(if: Mosquitto.available, "mosquitto is not installed"))
    func untrusted() async throws {
        let broker = try Self.startTLSMosquitto()
        let configuration = MQTTClientConfiguration(host: "localhost", port: broker.port, transport: try .tls(Self.clientTLS(trusting: "other-ca.pem")), connectTimeout: .seconds(3), reconnect: nil)
        await #expect {
            try await MQTTClient.withClient(configuration: configuration) { _ in }
        } throws: { ($0 as? MQTTError)?.code == .tlsFailure }
    }

    static func brokerTLSListener() throws -> MQTTListener {
        var server = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(try Self.fixture("server.pem").utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(try Self.fixture("server.key").utf8), format: .pem))
        )
        server.minimumTLSVersion = .tlsv12
        return try MQTTListener.tls(host: "127.0.0.1", port: 0, configuration: server)
    }

    @Test("Tether's broker serves TLS; its client connects through it")
    func brokerListener() async throws {
        let listener = try Self.brokerTLSListener()
        let broker = MQTTBroker()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [listener]) }
            defer { group.cancelAll() }
            let port = try await broker.addresses().first!.port!
            let configuration = MQTTClientConfiguration(host: "localhost", port: port, version: .v5, transport: try .tls(Self.clientTLS(trusting: "ca.pem")), reconnect: nil)
            try await MQTTClient.withClient(configuration: configuration) { client in
                try await client.subscribe(to: [MQTTTopicSubscription(filter: "t", qos: .exactlyOnce)]) { messages in
                    try await client.publish(MQTTMessage(topic: "t", payload: "over tls", qos: .exactlyOnce))
                    var iterator = messages.makeAsyncIterator()
                    #expect(await iterator.next()?.payloadString == "over tls")
                }
            }
        }
    }

    /// A TLS close waits for the peer's close_notify; what the client sent behind a refused
    /// CONNECT must not be acted on meanwhile (it once was: a second CONNECT was authenticated).
    @Test("over TLS, nothing behind a refused CONNECT is acted on")
    func nothingAfterRefusal() async throws {
        let broker = MQTTBroker()
        let events = broker.events()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [try Self.brokerTLSListener()]) }
            defer { group.cancelAll() }
            let port = try await broker.addresses().first!.port!
            let connected = NIOLockedValueBox(0)
            group.addTask {
                for await event in events {
                    if case .clientConnected = event { connected.withLockedValue { $0 += 1 } }
                }
            }
            let received = NIOLockedValueBox<[UInt8]>([])
            let tls = try NIOSSLContext(configuration: try Self.clientTLS(trusting: "ca.pem"))
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: "localhost"))
                        try channel.pipeline.syncOperations.addHandler(ByteCollector(received: received))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            // A v5 CONNECT naming an authentication method (refused with 0x8C), then a valid
            // 3.1.1 CONNECT, in one write.
            let refused = [UInt8].hex("10 16 00 04 4d 51 54 54 05 02 00 3c 08 15 00 05 53 43 52 41 4d 00 01 61")
            let valid = [UInt8].hex("10 0d 00 04 4d 51 54 54 04 02 00 3c 00 01 62")
            try await channel.writeAndFlush(ByteBuffer(bytes: refused + valid))
            try await channel.closeFuture.get()
            try await Task.sleep(for: .milliseconds(300))
            #expect(received.withLockedValue { $0 } == [0x20, 0x03, 0x00, 0x8C, 0x00])
            #expect(connected.withLockedValue { $0 } == 0)
            #expect(broker.sessionCount == 0)
        }
    }
}

/// Keeps every byte a raw test connection receives.
private final class ByteCollector: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let received: NIOLockedValueBox<[UInt8]>

    init(received: NIOLockedValueBox<[UInt8]>) { self.received = received }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Array(buffer: unwrapInboundIn(data))
        received.withLockedValue { $0 += bytes }
    }
}

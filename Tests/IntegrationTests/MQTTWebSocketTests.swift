import NIOCore
import NIOSSL
import Testing
import TetherMQTT
import TetherTestSupport

@Suite("MQTT over WebSocket", .timeLimit(.minutes(1)))
struct MQTTWebSocketTests {
    /// Runs Tether's broker with one listener until `body` returns; gives `body` the port.
    func withBroker(_ listener: MQTTListener, _ body: (Int) async throws -> Void) async throws {
        let broker = MQTTBroker()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [listener]) }
            defer { group.cancelAll() }
            try await body(try await broker.addresses().first!.port!)
        }
    }

    func roundTrip(_ configuration: MQTTClientConfiguration) async throws {
        try await MQTTClient.withClient(configuration: configuration) { client in
            try await client.subscribe(to: [MQTTTopicSubscription(filter: "ws/#", qos: .exactlyOnce)]) { messages in
                let big = String(repeating: "x", count: 70_000)   // larger than one WebSocket frame of many clients
                try await client.publish(MQTTMessage(topic: "ws/small", payload: "hello", qos: .atLeastOnce))
                try await client.publish(MQTTMessage(topic: "ws/big", payload: big, qos: .exactlyOnce))
                var iterator = messages.makeAsyncIterator()
                #expect(await iterator.next()?.payloadString == "hello")
                #expect(await iterator.next()?.payload.readableBytes == 70_000)
            }
        }
    }

    @Test("the client and the broker speak MQTT over WebSocket", arguments: [MQTTVersion.v311, .v5])
    func plain(version: MQTTVersion) async throws {
        try await withBroker(.webSocket(host: "127.0.0.1", port: 0)) { port in
            try await roundTrip(MQTTClientConfiguration(host: "127.0.0.1", port: port, version: version, transport: .webSocket(), reconnect: nil))
        }
    }

    @Test("and over WebSocket over TLS (wss)")
    func secure() async throws {
        let server = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(try MQTTTLSTests.fixture("server.pem").utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(try MQTTTLSTests.fixture("server.key").utf8), format: .pem))
        )
        try await withBroker(.webSocket(host: "127.0.0.1", port: 0, secure: try MQTTListener.tlsHandler(server))) { port in
            let transport = try MQTTTransport.webSocket(tls: MQTTTLSTests.clientTLS(trusting: "ca.pem"))
            try await roundTrip(MQTTClientConfiguration(host: "localhost", port: port, version: .v5, transport: transport, reconnect: nil))
        }
    }

    @Test("a WebSocket path the broker does not serve is refused with a typed error")
    func wrongPath() async throws {
        try await withBroker(.webSocket(host: "127.0.0.1", port: 0, path: "/mqtt")) { port in
            let configuration = MQTTClientConfiguration(host: "127.0.0.1", port: port, transport: .webSocket(path: "/other"), connectTimeout: .seconds(2), reconnect: nil)
            await #expect { try await MQTTClient.withClient(configuration: configuration) { _ in } } throws: { ($0 as? MQTTError)?.code == .connectFailed }
        }
    }
}

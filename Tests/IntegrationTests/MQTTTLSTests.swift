import Foundation
import NIOCore
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

    @Test("Tether's broker serves TLS; its client connects through it")
    func brokerListener() async throws {
        var server = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(try Self.fixture("server.pem").utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(try Self.fixture("server.key").utf8), format: .pem))
        )
        server.minimumTLSVersion = .tlsv12
        let listener = try MQTTListener.tls(host: "127.0.0.1", port: 0, configuration: server)
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
}

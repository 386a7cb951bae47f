import NIOCore
import NIOPosix
import Testing
@_spi(Testing) import TetherMQTT

/// A gateway's devices reconnect all day: whatever way a connection ends, the broker must let go
/// of everything it held for it (its handler was once kept alive by its own connection handle,
/// about 1 KiB per connection ever made).
@Suite("MQTT broker: a closed connection leaves nothing behind", .timeLimit(.minutes(1)))
struct MQTTBrokerConnectionLifetimeTests {
    @Test("handlers are released after normal disconnects, persistent sessions, takeovers, protocol errors and silent drops")
    func handlersReleased() async throws {
        let broker = MQTTBroker()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [.tcp(host: "127.0.0.1", port: 0)]) }
            defer { group.cancelAll() }
            let port = try await broker.addresses().first!.port!
            func configuration(_ clientID: String, clean: Bool = true) -> MQTTClientConfiguration {
                MQTTClientConfiguration(host: "127.0.0.1", port: port, clientID: clientID, cleanStart: clean, reconnect: nil)
            }

            for index in 0..<20 {
                try await MQTTClient.withClient(configuration: configuration("clean-\(index)")) { client in
                    _ = try await client.subscribe([MQTTTopicSubscription(filter: "lifetime/\(index)/#", qos: .atLeastOnce)])
                }
            }
            try await MQTTClient.withClient(configuration: configuration("persistent", clean: false)) { client in
                _ = try await client.subscribe([MQTTTopicSubscription(filter: "lifetime/persistent", qos: .atLeastOnce)])
            }
            try await MQTTClient.withClient(configuration: configuration("twice")) { first in
                try await MQTTClient.withClient(configuration: configuration("twice")) { _ in
                    try await waitUntil { !first.isConnected }
                }
            }
            // A malformed packet (a CONNECT with a reserved flag set) and a connection that
            // never says anything before it goes away.
            try await rawConnection(port: port, sending: [0x11, 0x00])
            try await rawConnection(port: port, sending: [])

            try await waitUntil { broker.connectionCount == 0 }
            try await waitUntil { broker.connectionHandlersInMemory == 0 }
            #expect(broker.connectionHandlersInMemory == 0)
            // The persistent session outlives its connection, as it should.
            #expect(broker.sessionCount == 1)
        }
    }

    /// Opens a TCP connection, writes `bytes`, then waits for the broker to close it (after a
    /// protocol error) or closes it itself when there is nothing to send.
    private func rawConnection(port: Int, sending bytes: [UInt8]) async throws {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get()
        if bytes.isEmpty {
            try await channel.close()
        } else {
            try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
            try await channel.closeFuture.get()
        }
    }
}

import NIOCore
import Synchronization
import Testing
@_spi(Testing) import TetherMQTT
import TetherTestSupport

/// Hooks as a gateway would write them: sessions keyed by the user name, No Local server-side
/// subscriptions, presence recorded in order.
final class GatewayLikeHooks: MQTTBrokerHooks {
    let presence = Mutex<[String]>([])

    func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        guard let username = request.username else { return .refused(.badUserNameOrPassword) }
        return .accepted(MQTTPrincipal(clientID: "device:" + username, username: username))
    }

    func serverSideSubscriptions(for principal: MQTTPrincipal) -> [MQTTTopicSubscription] {
        [MQTTTopicSubscription(filter: "down/\(principal.username!)/#", qos: .atLeastOnce, noLocal: true)]
    }

    func clientConnected(_ principal: MQTTPrincipal, remoteAddress: String) {
        presence.withLock { $0.append("connected \(principal.clientID)") }
    }

    func clientDisconnected(_ principal: MQTTPrincipal, reason: MQTTBrokerEvent.DisconnectReason) {
        presence.withLock { $0.append("disconnected \(principal.clientID) \(reason.rawValue)") }
    }
}

@Suite("Embedding the MQTT broker: identity, presence, server-side subscriptions", .timeLimit(.minutes(1)))
struct MQTTBrokerEmbeddingTests {
    func withBroker(_ hooks: GatewayLikeHooks, _ body: (MQTTBroker, Int) async throws -> Void) async throws {
        let broker = MQTTBroker(hooks: hooks)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [.tcp(host: "127.0.0.1", port: 0)]) }
            defer { group.cancelAll() }
            try await body(broker, try await broker.addresses().first!.port!)
        }
    }

    func configuration(_ port: Int, clientID: String, username: String) -> MQTTClientConfiguration {
        MQTTClientConfiguration(host: "127.0.0.1", port: port, clientID: clientID, username: username, reconnect: nil)
    }

    @Test("a session keyed by the hook: a second connection with another client id takes the first over")
    func identityFromHook() async throws {
        let hooks = GatewayLikeHooks()
        try await withBroker(hooks) { broker, port in
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "first-\(UInt8.random(in: 0...255))", username: "lamp")) { first in
                #expect(broker.isConnected(clientID: "device:lamp"))
                try await MQTTClient.withClient(configuration: configuration(port, clientID: "second", username: "lamp")) { second in
                    try await waitUntil { !first.isConnected }
                    #expect(broker.sessionCount == 1)
                    #expect(broker.isConnected(clientID: "device:lamp"))
                }
            }
            try await waitUntil { hooks.presence.withLock { $0.count } == 4 }
            let presence = hooks.presence.withLock { $0 }
            // The second connection and the first's takeover are reported from their own event
            // loops, in either order (the gateway does not depend on it: it ignores takeovers).
            #expect(presence.first == "connected device:lamp")
            #expect(Set(presence[1...2]) == ["connected device:lamp", "disconnected device:lamp takenOver"])
            #expect(presence.last == "disconnected device:lamp normal")
        }
    }

    @Test("server-side subscriptions with No Local: delivered without SUBSCRIBE, never echoed to the publisher")
    func serverSide() async throws {
        let hooks = GatewayLikeHooks()
        try await withBroker(hooks) { broker, port in
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "c", username: "lamp")) { client in
                let messages = client.messages()
                try await client.publish(MQTTMessage(topic: "down/lamp/own", payload: "echo?", qos: .atLeastOnce))
                broker.publish(MQTTMessage(topic: "down/lamp/set", payload: "on", qos: .atLeastOnce))
                let received = await MQTTClientMosquittoTests.collect(1, from: messages, timeout: .seconds(2))
                #expect(received.map(\.topic) == ["down/lamp/set"])
            }
        }
    }

    @Test("send reaches one client without any subscription; observe sees every publication")
    func sendAndObserve() async throws {
        let hooks = GatewayLikeHooks()
        try await withBroker(hooks) { broker, port in
            let seen = Mutex<[String]>([])
            let observation = try broker.observe("up/#") { message, publisher in seen.withLock { $0.append("\(publisher?.clientID ?? "broker") \(message.payloadString)") } }
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "c", username: "lamp")) { client in
                let messages = client.messages()
                #expect(broker.send(MQTTMessage(topic: "/ext/register", payload: "secret", qos: .atLeastOnce), toClientID: "device:lamp"))
                #expect(!broker.send(MQTTMessage(topic: "/ext/register", payload: "x"), toClientID: "nobody"))
                let received = await MQTTClientMosquittoTests.collect(1, from: messages, timeout: .seconds(2))
                #expect(received.map(\.payloadString) == ["secret"])
                for index in 0..<3 { try await client.publish(MQTTMessage(topic: "up/\(index)", payload: "\(index)", qos: .atLeastOnce)) }
                broker.publish(MQTTMessage(topic: "up/own", payload: "own"))
                observation.cancel()
                try await client.publish(MQTTMessage(topic: "up/late", payload: "late", qos: .atLeastOnce))
            }
            #expect(seen.withLock { $0 } == ["device:lamp 0", "device:lamp 1", "device:lamp 2", "broker own"])
        }
    }
}

/// Polls `condition` every 10 ms for up to `timeout`.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimeout() }
        try await Task.sleep(for: .milliseconds(10))
    }
}

struct WaitTimeout: Error {}

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

/// Hooks whose server-side subscriptions are templates: each device gets `dev/{home}/{name}/…`.
struct TemplateHooks: MQTTBrokerHooks {
    func authenticate(_ request: MQTTConnectRequest) async -> MQTTAuthentication {
        guard let username = request.username else { return .refused(.badUserNameOrPassword) }
        return .accepted(MQTTPrincipal(clientID: "device:" + username, username: username))
    }

    var serverSideTemplates: [MQTTTopicSubscription] {
        ["dev/{}/{}/set/+", "dev/{}/{}/config"].map { MQTTTopicSubscription(filter: $0, qos: .atLeastOnce, noLocal: true) }
    }

    func serverSideScope(for principal: MQTTPrincipal) -> [String]? {
        guard let username = principal.username, username != "plain" else { return nil }
        return ["home", username]
    }
}

@Suite("Embedding the MQTT broker: identity, presence, server-side subscriptions", .timeLimit(.minutes(1)))
struct MQTTBrokerEmbeddingTests {
    func withBroker(_ hooks: any MQTTBrokerHooks, _ body: (MQTTBroker, Int) async throws -> Void) async throws {
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
            broker.publish(MQTTMessage(topic: "down/lamp/config", payload: "retained", qos: .atLeastOnce, retain: true))
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "c", username: "lamp")) { client in
                let messages = client.messages()
                try await client.publish(MQTTMessage(topic: "down/lamp/own", payload: "echo?", qos: .atLeastOnce))
                broker.publish(MQTTMessage(topic: "down/lamp/set", payload: "on", qos: .atLeastOnce))
                // The retained message once: it is not yet in flight when the session resumes.
                let received = await MQTTClientMosquittoTests.collect(2, from: messages, timeout: .seconds(2))
                #expect(received.map(\.topic) == ["down/lamp/config", "down/lamp/set"])
            }
        }
    }

    @Test("template server-side subscriptions: each client gets its own topics and the retained ones, never another's or its own echo; gone with the session")
    func templates() async throws {
        try await withBroker(TemplateHooks()) { broker, port in
            broker.publish(MQTTMessage(topic: "dev/home/fan/config", payload: "retained", qos: .atLeastOnce, retain: true))
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "l", username: "lamp")) { lamp in
                let lampMessages = lamp.messages()
                try await MQTTClient.withClient(configuration: configuration(port, clientID: "f", username: "fan")) { fan in
                    let fanMessages = fan.messages()
                    try await lamp.publish(MQTTMessage(topic: "dev/home/lamp/set/power", payload: "echo?", qos: .atLeastOnce))
                    #expect(broker.publish(MQTTMessage(topic: "dev/home/lamp/set/power", payload: "on", qos: .atLeastOnce)) == 1)
                    #expect(broker.publish(MQTTMessage(topic: "dev/home/fan/set/speed", payload: "2", qos: .atLeastOnce)) == 1)
                    #expect(broker.publish(MQTTMessage(topic: "dev/home/lamp/other", payload: "no", qos: .atLeastOnce)) == 0)
                    #expect(await MQTTClientMosquittoTests.collect(1, from: lampMessages, timeout: .seconds(2)).map(\.payloadString) == ["on"])
                    let fanGot = await MQTTClientMosquittoTests.collect(2, from: fanMessages, timeout: .seconds(2)).map { "\($0.topic) \($0.payloadString) \($0.retain)" }
                    #expect(fanGot == ["dev/home/fan/config retained true", "dev/home/fan/set/speed 2 false"])
                }
                try await waitUntil { broker.sessionCount == 1 }
                #expect(broker.publish(MQTTMessage(topic: "dev/home/fan/set/speed", payload: "3", qos: .atLeastOnce)) == 0, "the fan's session ended")
                try await MQTTClient.withClient(configuration: configuration(port, clientID: "p", username: "plain")) { _ in
                    #expect(broker.publish(MQTTMessage(topic: "dev/home/plain/set/x", payload: "x", qos: .atLeastOnce)) == 0, "no scope, no templates")
                }
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

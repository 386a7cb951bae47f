import NIOCore
import Synchronization
import Testing
import TetherMQTT
import TetherTestSupport

/// A store that outlives the broker, as a database would.
final class RecordingPersistence: MQTTBrokerPersistence {
    let state = Mutex<(sessions: [String: MQTTStoredSession], retained: [String: MQTTMessage])>(([:], [:]))

    func load() async throws -> (sessions: [MQTTStoredSession], retained: [MQTTMessage]) {
        state.withLock { (Array($0.sessions.values), Array($0.retained.values)) }
    }
    func saveSession(_ session: MQTTStoredSession) { state.withLock { $0.sessions[session.clientID] = session } }
    func deleteSession(clientID: String) { _ = state.withLock { $0.sessions.removeValue(forKey: clientID) } }
    func saveRetained(topic: String, message: MQTTMessage?) { state.withLock { $0.retained[topic] = message } }
}

@Suite("MQTT broker persistence", .timeLimit(.minutes(1)))
struct MQTTBrokerPersistenceTests {
    /// Runs a broker on a free port with `persistence` until `body` returns.
    func withBroker(_ persistence: RecordingPersistence, _ body: (Int) async throws -> Void) async throws {
        let broker = MQTTBroker(persistence: persistence)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await broker.run(listeners: [.tcp(host: "127.0.0.1", port: 0)]) }
            defer { group.cancelAll() }
            try await body(try await broker.addresses().first!.port!)
        }
    }

    @Test("persistent sessions, their undelivered messages and retained messages survive a broker restart", arguments: [MQTTVersion.v311, .v5])
    func restart(version: MQTTVersion) async throws {
        let persistence = RecordingPersistence()
        func configuration(_ port: Int, clientID: String, clean: Bool) -> MQTTClientConfiguration {
            MQTTClientConfiguration(host: "127.0.0.1", port: port, version: version, clientID: clientID, cleanStart: clean, sessionExpiry: clean ? 0 : 3600, reconnect: nil)
        }
        try await withBroker(persistence) { port in
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "keeper", clean: false)) { client in
                try await client.subscribe([MQTTTopicSubscription(filter: "kept/#", qos: .atLeastOnce)])
            }
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "publisher", clean: true)) { client in
                for index in 0..<3 { try await client.publish(MQTTMessage(topic: "kept/\(index)", payload: "\(index)", qos: .atLeastOnce)) }
                try await client.publish(MQTTMessage(topic: "state/lamp", payload: "on", qos: .atLeastOnce, retain: true))
            }
        }
        #expect(persistence.state.withLock { $0.sessions["keeper"]?.pendingMessages.count } == 3)
        #expect(persistence.state.withLock { $0.sessions["publisher"] } == nil, "clean sessions are not stored")
        try await withBroker(persistence) { port in
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "keeper", clean: false)) { client in
                let received = await MQTTClientMosquittoTests.collect(3, from: client.messages())
                #expect(received.map(\.payloadString).sorted() == ["0", "1", "2"])
            }
            try await MQTTClient.withClient(configuration: configuration(port, clientID: "late", clean: true)) { client in
                try await client.subscribe(to: [MQTTTopicSubscription(filter: "state/#", qos: .atLeastOnce)]) { messages in
                    let retained = await MQTTClientMosquittoTests.collect(1, from: messages)
                    #expect(retained.first?.payloadString == "on" && retained.first?.retain == true)
                }
            }
        }
    }
}

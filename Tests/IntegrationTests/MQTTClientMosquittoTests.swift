import Foundation
import NIOCore
import Testing
import TetherCore
@_spi(Testing) import TetherMQTT
import TetherTestSupport

/// Tether's MQTT client against a real mosquitto on loopback, started by the test.
@Suite("MQTT client against mosquitto", .enabled(if: Mosquitto.available, "mosquitto is not installed (apt install mosquitto)"), .timeLimit(.minutes(1)))
struct MQTTClientMosquittoTests {
    static func configuration(_ broker: Mosquitto, _ version: MQTTVersion, clientID: String = "c-" + UUID().uuidString.prefix(8), cleanStart: Bool = true) -> MQTTClientConfiguration {
        MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, version: version, clientID: clientID, cleanStart: cleanStart,
            sessionExpiry: cleanStart ? 0 : 3600, keepAlive: 30, connectTimeout: .seconds(2), requestTimeout: .seconds(3),
            reconnect: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(400))
        )
    }

    /// Collects up to `count` messages from `stream`, waiting at most `timeout`.
    static func collect(_ count: Int, from stream: some AsyncSequence<MQTTMessage, Never> & Sendable, timeout: Duration = .seconds(5)) async -> [MQTTMessage] {
        await withTaskGroup(of: [MQTTMessage].self) { group in
            group.addTask {
                var messages: [MQTTMessage] = []
                for await message in stream {
                    messages.append(message)
                    if messages.count == count { break }
                }
                return messages
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return []
            }
            var best: [MQTTMessage] = []
            for await result in group {
                if result.count > best.count { best = result }
                if best.count == count { break }
                group.cancelAll()
            }
            group.cancelAll()
            return best
        }
    }

    @Test("QoS 0, 1 and 2 in both directions", arguments: [MQTTVersion.v311, .v5])
    func qos(version: MQTTVersion) async throws {
        let broker = try Mosquitto()
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version)) { client in
            try await client.subscribe(to: [MQTTTopicSubscription(filter: "q/#", qos: .exactlyOnce)]) { messages in
                for qos in MQTTQoS.allCases {
                    try await client.publish(MQTTMessage(topic: "q/\(qos.rawValue)", payload: "m\(qos.rawValue)", qos: qos))
                }
                let received = await Self.collect(3, from: messages)
                #expect(received.map(\.topic).sorted() == ["q/0", "q/1", "q/2"])
                #expect(Set(received.map { "\($0.topic)=\($0.payloadString)@\($0.qos.rawValue)" }) == ["q/0=m0@0", "q/1=m1@1", "q/2=m2@2"])
            }
        }
    }

    @Test("retained messages reach later subscribers with the retain flag", arguments: [MQTTVersion.v311, .v5])
    func retained(version: MQTTVersion) async throws {
        let broker = try Mosquitto()
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version)) { client in
            try await client.publish(MQTTMessage(topic: "r/lamp", payload: "on", qos: .atLeastOnce, retain: true))
        }
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version)) { client in
            try await client.subscribe(to: [MQTTTopicSubscription(filter: "r/#", qos: .atLeastOnce)]) { messages in
                let received = await Self.collect(1, from: messages)
                #expect(received.first?.payloadString == "on" && received.first?.retain == true)
            }
        }
    }

    @Test("the will is published when the connection is lost, not on a clean disconnect", arguments: [MQTTVersion.v311, .v5])
    func will(version: MQTTVersion) async throws {
        let broker = try Mosquitto()
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version)) { watcher in
            try await watcher.subscribe(to: [MQTTTopicSubscription(filter: "will/#", qos: .atLeastOnce)]) { messages in
                var polite = Self.configuration(broker, version)
                polite.will = MQTTWill(topic: "will/polite", payload: ByteBuffer(string: "gone"), qos: .atLeastOnce)
                try await MQTTClient.withClient(configuration: polite) { _ in }
                var rude = Self.configuration(broker, version)
                rude.will = MQTTWill(topic: "will/rude", payload: ByteBuffer(string: "lost"), qos: .atLeastOnce)
                rude.reconnect = nil
                try await MQTTClient.withClient(configuration: rude) { client in client.simulateConnectionLoss() }
                let received = await Self.collect(1, from: messages)
                #expect(received.map(\.topic) == ["will/rude"])
            }
        }
    }

    @Test("a persistent session gets what was published while it was away, across a broker restart", arguments: [MQTTVersion.v311, .v5])
    func persistentSessionAcrossRestart(version: MQTTVersion) async throws {
        let broker = try Mosquitto()
        let id = "persistent-\(version.rawValue)"
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version, clientID: id, cleanStart: false)) { client in
            try await client.subscribe([MQTTTopicSubscription(filter: "p/#", qos: .atLeastOnce)])
        }
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version)) { publisher in
            for index in 0..<5 { try await publisher.publish(MQTTMessage(topic: "p/\(index)", payload: "\(index)", qos: .atLeastOnce)) }
        }
        try broker.restart()
        try await MQTTClient.withClient(configuration: Self.configuration(broker, version, clientID: id, cleanStart: false)) { client in
            let received = await Self.collect(5, from: client.messages())
            #expect(received.map(\.payloadString).sorted() == ["0", "1", "2", "3", "4"])
        }
    }

    @Test("publications made while the broker is down are queued and delivered after reconnecting")
    func offlineQueueAndReconnect() async throws {
        let broker = try Mosquitto()
        var configuration = Self.configuration(broker, .v311)
        configuration.maximumQueuedMessages = 3
        try await MQTTClient.withClient(configuration: configuration) { client in
            let events = client.events()
            broker.stop()
            #expect(await next(events) { if case .disconnected = $0 { true } else { false } } != nil)
            #expect(!client.isConnected)
            let pending = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<3 { group.addTask { try await client.publish(MQTTMessage(topic: "o/\(index)", payload: "\(index)", qos: .atLeastOnce)) } }
                    try await group.waitForAll()
                }
            }
            #expect(await eventually { client.queuedMessageCount == 3 })
            await #expect { try await client.publish(MQTTMessage(topic: "o/full", payload: "x", qos: .atLeastOnce)) } throws: {
                ($0 as? MQTTError)?.code == .offlineQueueFull
            }
            try broker.start()
            try await MQTTClient.withClient(configuration: Self.configuration(broker, .v311)) { watcher in
                try await watcher.subscribe(to: [MQTTTopicSubscription(filter: "o/#", qos: .atLeastOnce)]) { messages in
                    // The client reconnects on its own (backoff) and sends what waited.
                    try await pending.value
                    #expect(client.isConnected)
                    _ = messages
                }
            }
        }
    }

    @Test("a refused connection says why: bad credentials", arguments: [(MQTTVersion.v311, MQTTReasonCode.badUserNameOrPassword), (.v5, .badUserNameOrPassword)])
    func refusedCredentials(version: MQTTVersion, reason: MQTTReasonCode) async throws {
        // user "u", password "right"
        let passwords = "u:$7$101$N4o6x0U1ZDSAaCck$Qba1O8K3B7CZ5HDcuzNPKni1mF/YO5/SZS0XgRHExeLJBqePhQVK+BAHD/IvGOpTIeEtApoQeE1tz8R0yMztbA==\n"
        let broker = try Mosquitto(extraConfiguration: "allow_anonymous false\npassword_file $DIR/passwords", files: ["passwords": passwords])
        var configuration = Self.configuration(broker, version)
        configuration.username = "u"
        configuration.password = Array("wrong".utf8)
        await #expect {
            try await MQTTClient.withClient(configuration: configuration) { _ in }
        } throws: { error in
            guard let error = error as? MQTTError else { return false }
            return error.code == .connectionRefused && (error.reasonCode == reason || error.reasonCode == .notAuthorized)
        }
    }

    @Test("v5: a publication refused by the broker's ACL fails with its reason code")
    func refusedPublication() async throws {
        let broker = try Mosquitto(extraConfiguration: "acl_file $DIR/acl", files: ["acl": "topic readwrite allowed/#\n"])
        try await MQTTClient.withClient(configuration: Self.configuration(broker, .v5)) { client in
            try await client.publish(MQTTMessage(topic: "allowed/x", payload: "ok", qos: .atLeastOnce))
            await #expect {
                try await client.publish(MQTTMessage(topic: "forbidden/x", payload: "no", qos: .atLeastOnce))
            } throws: { error in
                (error as? MQTTError)?.code == .publishRefused && (error as? MQTTError)?.reasonCode == .notAuthorized
            }
        }
    }

    @Test("a scoped subscription unsubscribes when its scope ends")
    func scopedUnsubscribe() async throws {
        let broker = try Mosquitto()
        try await MQTTClient.withClient(configuration: Self.configuration(broker, .v311)) { client in
            try await client.subscribe(to: [MQTTTopicSubscription(filter: "s/t", qos: .atLeastOnce)]) { messages in
                try await client.publish(MQTTMessage(topic: "s/t", payload: "in", qos: .atLeastOnce))
                #expect(await Self.collect(1, from: messages).count == 1)
            }
            let all = client.messages()
            try await client.publish(MQTTMessage(topic: "s/t", payload: "after", qos: .atLeastOnce))
            #expect(await Self.collect(1, from: all, timeout: .milliseconds(500)).isEmpty)
        }
    }

    @Test("nothing listening: a typed connect failure")
    func connectFailure() async throws {
        let port = Mosquitto.freePort()
        await #expect {
            try await MQTTClient.withClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", port: port, connectTimeout: .seconds(1))) { _ in }
        } throws: { ($0 as? MQTTError)?.code == .connectFailed }
    }
}

/// The client against a scripted server, for what a real broker cannot show.
@Suite("MQTT client protocol details", .timeLimit(.minutes(1)))
struct MQTTClientScriptedTests {
    @Test("a server that never answers CONNECT gives a timeout")
    func connackTimeout() async throws {
        let server = try await ScriptedMQTTServer(behaviour: .init(connack: nil))
        await #expect {
            try await MQTTClient.withClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", port: server.port, connectTimeout: .milliseconds(500))) { _ in }
        } throws: { ($0 as? MQTTError)?.code == .timeout }
        await server.close()
    }

    @Test("a PINGREQ left unanswered closes the connection as dead, after the ping timeout and not before")
    func pingTimeout() async throws {
        let server = try await ScriptedMQTTServer()
        var configuration = MQTTClientConfiguration(host: "127.0.0.1", port: server.port, keepAlive: 1, pingTimeout: .seconds(2))
        configuration.reconnect = nil
        try await MQTTClient.withClient(configuration: configuration) { client in
            let events = client.events()
            #expect(await eventually { server.packets.contains(.pingreq) })
            let pinged = ContinuousClock.now
            var ending: MQTTError?
            for await event in events {
                if case .disconnected(let error) = event {
                    ending = error
                    break
                }
            }
            #expect(ending?.code == .timeout)
            // A lower bound only: the PINGREQ was seen after it arrived, never before.
            #expect(ContinuousClock.now - pinged >= .seconds(1), "not closed before the ping timeout")
        }
        await server.close()
    }

    @Test("the in-flight window bounds unacknowledged publications; acknowledgements open it")
    func inflightWindow() async throws {
        let server = try await ScriptedMQTTServer()
        var configuration = MQTTClientConfiguration(host: "127.0.0.1", port: server.port, maximumInflight: 2)
        configuration.reconnect = nil
        try await MQTTClient.withClient(configuration: configuration) { client in
            let publishing = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<5 { group.addTask { try await client.publish(MQTTMessage(topic: "w/\(index)", payload: "x", qos: .atLeastOnce)) } }
                    try await group.waitForAll()
                }
            }
            func publishes() -> [MQTTPublish] { server.packets.compactMap { if case .publish(let p) = $0 { p } else { nil } } }
            #expect(await eventually { publishes().count == 2 })
            try await Task.sleep(for: .milliseconds(200))
            #expect(publishes().count == 2, "no more than the window before an acknowledgement")
            #expect(client.queuedMessageCount == 3)
            for publish in publishes() { try server.send(.puback(MQTTAck(packetID: publish.packetID!))) }
            #expect(await eventually { publishes().count == 4 })
            for publish in publishes().suffix(2) { try server.send(.puback(MQTTAck(packetID: publish.packetID!))) }
            #expect(await eventually { publishes().count == 5 })
            try server.send(.puback(MQTTAck(packetID: publishes().last!.packetID!)))
            try await publishing.value
        }
        await server.close()
    }

    @Test("after a reconnect into a present session, unacknowledged QoS 1/2 messages are resent with DUP and the same id")
    func dupRedelivery() async throws {
        let server = try await ScriptedMQTTServer(behaviour: .init(connack: MQTTConnAck(sessionPresent: true)))
        var configuration = MQTTClientConfiguration(host: "127.0.0.1", port: server.port, cleanStart: false)
        configuration.reconnect = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(100))
        try await MQTTClient.withClient(configuration: configuration) { client in
            let publishing = Task { try await client.publish(MQTTMessage(topic: "d/1", payload: "x", qos: .exactlyOnce)) }
            func publishes() -> [MQTTPublish] { server.packets.compactMap { if case .publish(let p) = $0 { p } else { nil } } }
            #expect(await eventually { publishes().count == 1 })
            server.dropConnections()
            #expect(await eventually { publishes().count == 2 })
            let (first, again) = (publishes()[0], publishes()[1])
            #expect(!first.dup && again.dup && first.packetID == again.packetID)
            try server.send(.pubrec(MQTTAck(packetID: again.packetID!)))
            #expect(await eventually { server.packets.contains(.pubrel(MQTTAck(packetID: again.packetID!))) })
            try server.send(.pubcomp(MQTTAck(packetID: again.packetID!)))
            try await publishing.value
        }
        await server.close()
    }

    @Test("inbound QoS 2 is delivered once even when the server resends it")
    func inboundExactlyOnce() async throws {
        let server = try await ScriptedMQTTServer()
        try await MQTTClient.withClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", port: server.port)) { client in
            let messages = client.messages()
            let publish = MQTTPublish(topic: "x", payload: ByteBuffer(string: "once"), qos: .exactlyOnce, packetID: 9)
            try server.send(.publish(publish))
            var resent = publish
            resent.dup = true
            try server.send(.publish(resent))
            #expect(await eventually { server.packets.filter { $0 == .pubrec(MQTTAck(packetID: 9)) }.count == 2 })
            try server.send(.pubrel(MQTTAck(packetID: 9)))
            #expect(await eventually { server.packets.contains(.pubcomp(MQTTAck(packetID: 9))) })
            #expect(await MQTTClientMosquittoTests.collect(2, from: messages, timeout: .milliseconds(500)).count == 1)
        }
        await server.close()
    }
}

import Foundation
import NIOCore
import Testing
import TetherAlink
import TetherCore
@_spi(Testing) import TetherMQTT
import TetherTestSupport

/// The IoT channel against a stock broker (mosquitto), with a second client playing the
/// server that answers `_reply`: requests matched by id, refusals and timeouts as typed errors,
/// the envelope and raw uploads as sent, subscriptions with their filter, across a reconnection.
@Suite("IoT channel against mosquitto", .enabled(if: Mosquitto.available, "mosquitto is not installed (apt install mosquitto)"), .timeLimit(.minutes(1)))
struct TetherChannelMosquittoTests {
    private let device: AlinkDeviceIdentity
    private var base: String { "/sys/\(device.productKey)/\(device.deviceName)" }

    init() throws {
        device = try AlinkDeviceIdentity(productKey: "a1PK000002", deviceName: "phone-1")
    }

    private func configuration(_ broker: Mosquitto, reconnect: ReconnectPolicy? = nil) -> TetherChannelConfiguration {
        TetherChannelConfiguration(host: "127.0.0.1", port: broker.port, device: device, deviceSecret: "s3cr3t", replyTimeout: .seconds(5), reconnect: reconnect)
    }

    /// Answers every request on `filter` with `code` (and the params back as data), until cancelled.
    private func respond(_ server: MQTTClient, _ requests: MQTTSubscription, code: (ChannelRequest) -> Int) async throws {
        for await message in requests {
            guard !message.topic.hasSuffix("_reply") else { continue }
            let request = try ChannelRequest(parsing: message.payload.readableBytesView)
            let reply = AlinkReply(id: request.id, code: code(request), data: request.params, message: "answered")
            try await server.publish(MQTTMessage(topic: message.topic + "_reply", payload: ByteBuffer(bytes: reply.bytes), qos: .atLeastOnce))
        }
    }

    @Test("invoke: the reply with the request's id; a refusal and a missing reply are typed errors")
    func invoke() async throws {
        let broker = try Mosquitto()
        let server = MQTTClientConfiguration(host: "127.0.0.1", port: broker.port, clientID: "server")
        try await MQTTClient.withClient(configuration: server) { server in
            try await server.subscribe(to: [.init(filter: "\(base)/app/#", qos: .atLeastOnce)]) { requests in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await respond(server, requests) { $0.params["refuse"] == true ? 6813 : 200 } }
                    try await TetherChannel.withChannel(configuration: configuration(broker)) { channel in
                        #expect(channel.connectionState == .connected)
                        let options = ChannelInvokeOptions(extraParams: ["method": "app.echo"])
                        // Concurrent requests on one topic: each gets its own answer.
                        async let first = channel.invoke(topic: "\(base)/app/echo", params: ["n": 1], options: options)
                        async let second = channel.invoke(topic: "\(base)/app/echo", params: ["n": 2])
                        let (a, b) = try await (first, second)
                        #expect(a.data == ["n": 1])
                        #expect(b.data == ["n": 2])
                        #expect(a.id != b.id)

                        do {
                            _ = try await channel.invoke(topic: "\(base)/app/echo", params: ["refuse": true])
                            Issue.record("a refusal was returned as success")
                        } catch let error as TetherError {
                            #expect(error.code == .cloudRefused)
                            #expect(error.cloudCode == 6813)
                        }
                        // Nobody answers under /other: a timeout, quickly when asked.
                        do {
                            _ = try await channel.invoke(topic: "\(base)/other/ask", params: [:], options: ChannelInvokeOptions(timeout: .milliseconds(300)))
                            Issue.record("a request nobody answered succeeded")
                        } catch let error as TetherError {
                            #expect(error.code == .timeout)
                        }
                        do {
                            _ = try await channel.invoke(topic: "\(base)/app/#", params: [:])
                            Issue.record("a wildcard topic was accepted")
                        } catch let error as TetherError {
                            #expect(error.code == .invalidArgument)
                        }
                    }
                    group.cancelAll()
                }
            }
        }
    }

    @Test("publish sends the envelope, upload the bytes as they are; subscriptions deliver through the filter")
    func publishUploadSubscribe() async throws {
        let broker = try Mosquitto()
        let server = MQTTClientConfiguration(host: "127.0.0.1", port: broker.port, clientID: "server")
        try await MQTTClient.withClient(configuration: server) { server in
            try await server.subscribe(to: [.init(filter: "\(base)/up/#", qos: .atLeastOnce)]) { upstream in
                var iterator = upstream.makeAsyncIterator()
                try await TetherChannel.withChannel(configuration: configuration(broker)) { channel in
                    try await channel.publish(topic: "\(base)/up/event", params: ["temperature": .double(21.5)])
                    let published = try #require(await iterator.next())
                    let envelope = try ChannelRequest(parsing: published.payload.readableBytesView)
                    #expect(envelope.params == ["temperature": .double(21.5)])
                    let object = try #require(try JSONValue.parse(published.payload.readableBytesView).objectValue)
                    #expect(object["system"]?["version"] == "1.0")
                    #expect(object["request"] == .object([:]))

                    try await channel.uploadData(topic: "\(base)/up/raw", data: [0x00, 0xFF, 0x10])
                    let raw = try #require(await iterator.next())
                    #expect(Array(raw.payload.readableBytesView) == [0x00, 0xFF, 0x10])

                    let events = channel.messages(shouldHandle: { $0.hasSuffix("/down/event") })
                    try await channel.subscribe(topic: "\(base)/down/+")
                    try await server.publish(MQTTMessage(topic: "\(base)/down/other", payload: "skipped", qos: .atLeastOnce))
                    try await server.publish(MQTTMessage(topic: "\(base)/down/event", payload: #"{"id":"1","params":{"on":true}}"#, qos: .atLeastOnce))
                    var received = events.makeAsyncIterator()
                    let message = try #require(await received.next())
                    #expect(message.topic == "\(base)/down/event")
                    #expect(message.json?["params"] == ["on": true])

                    try await channel.unsubscribe(topic: "\(base)/down/+")
                    let all = channel.messages()
                    try await server.publish(MQTTMessage(topic: "\(base)/down/event", payload: "after", qos: .atLeastOnce))
                    // A probe on a topic still subscribed shows the message after the unsubscription never came.
                    try await channel.subscribe(topic: "\(base)/probe")
                    try await server.publish(MQTTMessage(topic: "\(base)/probe", payload: "probe", qos: .atLeastOnce))
                    var next = all.makeAsyncIterator()
                    #expect(try #require(await next.next()).topic == "\(base)/probe")
                }
            }
        }
    }

    @Test("an MQTT error the body throws comes out as it is; only a failed first connection is connectionFailed")
    func bodyErrors() async throws {
        let broker = try Mosquitto()
        let thrown = await #expect(throws: MQTTError.self) {
            try await TetherChannel.withChannel(configuration: configuration(broker)) { _ in throw MQTTError(.subscriptionRefused, "the body's own") }
        }
        #expect(thrown?.code == .subscriptionRefused)
        var unreachable = configuration(broker)
        unreachable.port = Mosquitto.freePort()
        let refused = await #expect(throws: TetherError.self) { try await TetherChannel.withChannel(configuration: unreachable) { _ in } }
        #expect(refused?.code == .connectionFailed)
    }

    @Test("subscriptions and reply topics are subscribed again after the connection is lost")
    func reconnection() async throws {
        let broker = try Mosquitto()
        let server = MQTTClientConfiguration(host: "127.0.0.1", port: broker.port, clientID: "server")
        let policy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        try await MQTTClient.withClient(configuration: server) { server in
            try await server.subscribe(to: [.init(filter: "\(base)/app/#", qos: .atLeastOnce)]) { requests in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await respond(server, requests) { _ in 200 } }
                    try await TetherChannel.withChannel(configuration: configuration(broker, reconnect: policy)) { channel in
                        _ = try await channel.invoke(topic: "\(base)/app/echo", params: ["before": true])
                        try await channel.subscribe(topic: "\(base)/down/event")
                        var states = channel.stateChanges().makeAsyncIterator()
                        channel.mqtt.simulateConnectionLoss()
                        while let state = await states.next(), state != .connected {}
                        let reply = try await channel.invoke(topic: "\(base)/app/echo", params: ["after": true])
                        #expect(reply.data == ["after": true])
                        let messages = channel.messages()
                        try await server.publish(MQTTMessage(topic: "\(base)/down/event", payload: "again", qos: .atLeastOnce))
                        var iterator = messages.makeAsyncIterator()
                        #expect(try #require(await iterator.next()).payload == Array("again".utf8))
                    }
                    group.cancelAll()
                }
            }
        }
    }
}

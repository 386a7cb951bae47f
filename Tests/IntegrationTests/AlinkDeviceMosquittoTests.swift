import Foundation
import NIOCore
import Testing
import TetherAlink
import TetherCore
import TetherMQTT
import TetherTestSupport

/// The device side of Alink against a stock broker (mosquitto), with a second client playing
/// the cloud: posts and their replies, a property set and a service call with their replies.
@Suite("Alink device client against mosquitto", .enabled(if: Mosquitto.available, "mosquitto is not installed (apt install mosquitto)"), .timeLimit(.minutes(1)))
struct AlinkDeviceMosquittoTests {
    @Test("post, reply, property set and service call through a stock broker")
    func roundTrips() async throws {
        let broker = try Mosquitto()
        let device = try AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "dev01")
        let deviceConfiguration = AlinkDeviceConfiguration(
            host: "127.0.0.1", port: broker.port, device: device, deviceSecret: "s3cr3t",
            replyTimeout: .seconds(5), subscribesExplicitly: true
        )
        let cloudConfiguration = MQTTClientConfiguration(host: "127.0.0.1", port: broker.port, clientID: "cloud")
        try await MQTTClient.withClient(configuration: cloudConfiguration) { cloud in
            try await cloud.subscribe(to: [.init(filter: "/sys/+/+/thing/#", qos: .atLeastOnce)]) { upstream in
                try await AlinkDeviceClient.withClient(configuration: deviceConfiguration) { client in
                    let downlinks = client.downlinks()
                    async let posted = client.postProperties(["LightSwitch": 1])
                    // The cloud's filter also matches what the cloud itself sends down: skip that.
                    var iterator = upstream.filter { message in
                        switch AlinkDeviceTopic(parsing: message.topic)?.topic {
                        case .propertyPost?, .propertySetReply?, .serviceReply?: return true
                        default: return false
                        }
                    }.makeAsyncIterator()
                    let post = try #require(await iterator.next())
                    #expect(post.topic == "/sys/a1PK000001/dev01/thing/event/property/post")
                    let request = try AlinkRequest(parsing: post.payload.readableBytesView)
                    #expect(request.method == "thing.event.property.post")
                    #expect(request.params == ["LightSwitch": 1])
                    try await cloud.publish(MQTTMessage(topic: post.topic + "_reply", payload: ByteBuffer(bytes: request.reply(code: 460, message: "nope").bytes), qos: .atLeastOnce))
                    let reply = try await posted
                    #expect(reply.id == request.id)
                    #expect(reply.code == 460)
                    #expect(reply.message == "nope")

                    let set = AlinkRequest(id: "9001", method: "thing.service.property.set", params: ["LightSwitch": 0])
                    try await cloud.publish(MQTTMessage(topic: "/sys/a1PK000001/dev01/thing/service/property/set", payload: ByteBuffer(bytes: set.bytes), qos: .atLeastOnce))
                    var downlinkIterator = downlinks.makeAsyncIterator()
                    let received = try #require(await downlinkIterator.next())
                    #expect(received.topic.topic == .propertySet)
                    #expect(received.request == set)
                    try await client.reply(set.reply(), to: received)
                    let setReply = try #require(await iterator.next())
                    #expect(setReply.topic == "/sys/a1PK000001/dev01/thing/service/property/set_reply")
                    #expect(try AlinkReply(parsing: setReply.payload.readableBytesView).id == "9001")

                    let call = AlinkRequest(id: "9002", method: "thing.service.Reboot", params: ["delay": 3])
                    try await cloud.publish(MQTTMessage(topic: "/sys/a1PK000001/dev01/thing/service/Reboot", payload: ByteBuffer(bytes: call.bytes), qos: .atLeastOnce))
                    let service = try #require(await downlinkIterator.next())
                    #expect(service.topic.topic == .service("Reboot"))
                    try await client.reply(call.reply(data: ["ok": 1]), to: service)
                    let serviceReply = try #require(await iterator.next())
                    #expect(serviceReply.topic == "/sys/a1PK000001/dev01/thing/service/Reboot_reply")
                    let answered = try AlinkReply(parsing: serviceReply.payload.readableBytesView)
                    #expect(answered.id == "9002")
                    #expect(answered.data == ["ok": 1])
                }
            }
        }
    }

    @Test("a post nobody answers times out with a typed error")
    func replyTimeout() async throws {
        let broker = try Mosquitto()
        let device = try AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "dev02")
        let configuration = AlinkDeviceConfiguration(
            host: "127.0.0.1", port: broker.port, device: device, deviceSecret: "s", replyTimeout: .milliseconds(300), subscribesExplicitly: true
        )
        try await AlinkDeviceClient.withClient(configuration: configuration) { client in
            let error = await #expect(throws: TetherError.self) { try await client.postProperties(["LightSwitch": 1]) }
            #expect(error?.code == .timeout)
        }
    }

    @Test("keep-alive outside 30…1200 s is refused before connecting")
    func keepAlive() async throws {
        let device = try AlinkDeviceIdentity(productKey: "a1PK000001", deviceName: "dev03")
        let configuration = AlinkDeviceConfiguration(host: "127.0.0.1", port: 1, device: device, deviceSecret: "s", keepAlive: 10)
        let error = await #expect(throws: TetherError.self) { try await AlinkDeviceClient.withClient(configuration: configuration) { _ in } }
        #expect(error?.code == .invalidArgument)
    }
}

import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing
import TetherAlink
import TetherCore
import TetherMQTT
@testable import TetherCloud

/// Server-side subscribers: a product's device messages pushed to an HTTP endpoint on loopback,
/// signed, retried until taken, each once per message id.
@Suite("Data forwarding to a product's HTTP endpoint", .timeLimit(.minutes(2)))
struct ForwardingTests {
    struct Received: Sendable {
        var messageID: String
        var signature: String
        var body: String
    }

    /// What the receiver took, in order.
    final class Inbox: Sendable {
        private let items = Mutex<[Received]>([])
        func append(_ item: Received) { items.withLock { $0.append(item) } }
        var all: [Received] { items.withLock { $0 } }
        var bodies: [JSONValue] { all.compactMap { try? JSONValue.parse($0.body) } }
    }

    /// A receiver on a loopback port that refuses (500) its first `failures` requests.
    static func withReceiver<Result: Sendable>(
        failures: Int = 0, _ body: @Sendable (_ url: String, _ received: Inbox) async throws -> Result
    ) async throws -> Result {
        let received = Inbox()
        let refused = Mutex(0)
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let text = String(buffer: try await request.body.collect(upTo: 1 << 20))
            let refuse = refused.withLock { count in
                count += 1
                return count <= failures
            }
            if refuse { return Response(status: .internalServerError) }
            received.append(
                Received(
                    messageID: request.headers[HTTPField.Name("X-Tether-Message-Id")!] ?? "",
                    signature: request.headers[HTTPField.Name("X-Tether-Signature")!] ?? "", body: text))
            return Response(status: .ok)
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await receiver.test(.live) { client in
            try await body("http://127.0.0.1:\(client.port!)/hook", received)
        }
    }

    @Test("presence, reports, events and custom-topic messages arrive signed, after a refusal too; another product's do not", arguments: TestEngine.allCases)
    func forwards(engine: TestEngine) async throws {
        try await Self.withReceiver(failures: 1) { url, received in
            try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
                let product = try await GatewayFixtures.lampProduct(cloud)
                let device = try await GatewayFixtures.device(cloud, product: product)
                let otherProduct = try await GatewayFixtures.lampProduct(cloud)
                let outsider = try await GatewayFixtures.device(cloud, product: otherProduct)
                let forwarder = try await cloud.admin.addForwarder(productKey: product.productKey, url: url, kinds: Set(ForwardKind.allCases))
                try await GatewayFixtures.withDevice(cloud, outsider) { client in _ = try await client.postProperties(["Brightness": 1]) }
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    #expect(try await client.postProperties(["Brightness": 50, "LightSwitch": 1]).isSuccess)
                    let alarm = try await client.postEvent("Overheat", value: ["Temperature": 88])
                    #expect(alarm.isSuccess, "\(alarm.message)")
                    try await client.mqtt.publish(
                        MQTTMessage(topic: "/\(device.productKey)/\(device.deviceName)/user/update", payload: ByteBuffer(bytes: [1, 2, 3]), qos: .atLeastOnce))
                    try await GatewayFixtures.waitUntil(timeout: .seconds(20), "four kinds arrived") {
                        Set(received.bodies.compactMap { $0["kind"]?.stringValue }).isSuperset(of: ["presence", "property", "event", "user"])
                    }
                }
                try await GatewayFixtures.waitUntil(timeout: .seconds(20), "the offline notice arrived") {
                    received.bodies.contains { $0["kind"] == "presence" && $0["payload"]?["online"] == false }
                }
                let all = received.all
                for message in all {
                    #expect(message.signature == "sha256=" + ForwardingDelivery.signature(message.body, secret: forwarder.secret))
                }
                #expect(Set(all.map(\.messageID)).count == all.count, "one delivery per message")
                let bodies = received.bodies
                #expect(bodies.allSatisfy { $0["did"]?.stringValue == device.did && $0["product_key"]?.stringValue == device.productKey })
                let report = try #require(bodies.first { $0["kind"] == "property" })
                #expect(report["payload"]?["Brightness"] == 50 && report["topic"]?.stringValue?.hasSuffix("/thing/event/property/post") == true)
                #expect(bodies.first { $0["kind"] == "event" }?["payload"]?["identifier"] == "Overheat")
                #expect(bodies.first { $0["kind"] == "user" }?["payload_base64"] == "AQID")
                // The refused one was tried again (after a second) and taken.
                try await GatewayFixtures.waitUntil(timeout: .seconds(20), "every message was delivered") {
                    try await cloud.admin.forwardedMessages(forwarderID: forwarder.id).allSatisfy { $0.state == "delivered" }
                }
                let entries = try await cloud.admin.forwardedMessages(forwarderID: forwarder.id)
                #expect(entries.contains { $0.attempts == 2 && $0.lastError == "HTTP 500" })
            }
        }
    }

    @Test("a message the endpoint never takes is tried with growing pauses, then kept as failed")
    func givesUp() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            // A port nothing listens on.
            let forwarder = try await cloud.admin.addForwarder(productKey: product.productKey, url: "http://127.0.0.1:9/hook", kinds: [.property])
            #expect(ForwardingDelivery.backoffMs(attempts: 1) == 1000 && ForwardingDelivery.backoffMs(attempts: 4) == 8000)
            #expect(ForwardingDelivery.backoffMs(attempts: 30) == 600_000)
            let store = ForwarderStore(cloud.database)
            try await store.enqueue([(forwarder.id, #"{"kind":"property"}"#)], atMs: Clock.unixMilliseconds())
            let delivery = ForwardingDelivery(database: cloud.database, logger: GatewayFixtures.quietLogger, requestTimeout: .seconds(2))
            // The node's own loop may take it first; either way it is refused and rescheduled.
            try await GatewayFixtures.waitUntil("the first attempt failed") {
                _ = try await delivery.deliverDue()
                return try await store.entries(forwarderID: forwarder.id, limit: 1).first?.attempts == 1
            }
            #expect(try await store.entries(forwarderID: forwarder.id, limit: 1).first?.state == "pending")
            try await cloud.database.query("UPDATE forward_outbox SET attempts = $1, next_attempt_ms = 0, lease_until_ms = 0", .int(ForwardingDelivery.maximumAttempts - 1))
            try await GatewayFixtures.waitUntil("it was given up on") {
                _ = try await delivery.deliverDue()
                return try await store.entries(forwarderID: forwarder.id, limit: 1).first?.state == "failed"
            }
            await #expect(throws: CloudAPIError.self) { try await cloud.admin.addForwarder(productKey: product.productKey, url: "ftp://x/", kinds: [.event]) }
            await #expect(throws: CloudAPIError.self) { try await cloud.admin.addForwarder(productKey: "nope", url: "http://x/", kinds: [.event]) }
            try await cloud.admin.removeForwarder(id: forwarder.id)
            #expect(try await store.entries(forwarderID: forwarder.id, limit: 1).isEmpty)
        }
    }
}

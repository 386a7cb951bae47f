import Foundation
import Testing
import TetherAlink
import TetherCloudClient
import TetherCore
@testable import TetherCloud

/// The SDK's WebSocket M2M client (`CloudRealtime`) against a live cloud on loopback.
@Suite("SDK real-time client", .timeLimit(.minutes(1)))
struct CloudRealtimeClientTests {
    static func configuration(_ cloud: CloudHarness) throws -> CloudRealtimeConfiguration {
        CloudRealtimeConfiguration(endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID, heartbeat: .seconds(5), requestTimeout: .seconds(15))
    }

    /// The first event matching `predicate`, or a failure after `timeout`.
    static func next(_ events: AsyncStream<CloudRealtimeEvent>, timeout: Duration = .seconds(5), where predicate: @escaping @Sendable (CloudRealtimeEvent) -> Bool) async throws -> CloudRealtimeEvent {
        try await withThrowingTaskGroup(of: CloudRealtimeEvent?.self) { group in
            group.addTask {
                for await event in events where predicate(event) { return event }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let event = first else { throw TestFailure("no matching event within \(timeout)") }
            return event
        }
    }

    @Test("subscribe, reports as events, a write acknowledged with its ledger id, the report that answers it, reads, refusals")
    func writeAndWatch() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let (product, device, user) = try await GatewayFixtures.boundLamp(cloud)
            let stranger = try await GatewayFixtures.device(cloud, product: product)
            let session = CloudSession(uid: user.uid, token: user.token, expireAt: user.expireAt)
            try await CloudRealtime.withRealtime(configuration: try Self.configuration(cloud), session: { session }) { realtime in
                let events = realtime.events()
                let refused = try await realtime.subscribe([device.did, stranger.did])
                #expect(refused == [stranger.did: 9017])
                let offline = await #expect(throws: TetherError.self) { try await realtime.write(did: device.did, attrs: ["Brightness": 1]) }
                #expect(offline?.cloudCode == 9042)
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    _ = try await Self.next(events) { $0 == .online(did: device.did, online: true) }
                    let downlinks = client.downlinks()
                    async let acknowledgement = realtime.write(did: device.did, attrs: ["Brightness": 42], sn: 77)
                    let set = try await GatewayFixtures.nextDownlink(downlinks)
                    try await client.reply(set.request!.reply(), to: set)
                    let ack = try await acknowledgement
                    #expect(ack.sn == 77)
                    #expect(ack.commandID != nil)
                    _ = try await client.postProperties(["Brightness": 42])
                    let answered = try await Self.next(events) { if case .status(_, _, 77?) = $0 { true } else { false } }
                    #expect(answered == .status(did: device.did, attrs: ["Brightness": 42], sn: 77))
                    #expect(try await realtime.read(did: device.did)["Brightness"] == 42)

                    let laterDownlinks = client.downlinks()
                    let second = Task { try await realtime.write(did: device.did, attrs: ["Brightness": 5]) }
                    let refusedSet = try await GatewayFixtures.nextDownlink(laterDownlinks)
                    try await client.reply(refusedSet.request!.reply(code: 6813, message: "busy"), to: refusedSet)
                    let failure = await #expect(throws: TetherError.self) { try await second.value }
                    #expect(failure?.cloudCode == 6813)
                }
                _ = try await Self.next(events) { $0 == .online(did: device.did, online: false) }
            }
        }
    }

    @Test("a wrong token is refused at connect with notLoggedIn")
    func wrongToken() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let user = try await cloud.register("realtime")
            let forged = UserSession(uid: user.uid, token: String(repeating: "f", count: 32), expireAt: 0)
            let error = await #expect(throws: TetherError.self) {
                try await CloudRealtime.withRealtime(configuration: try Self.configuration(cloud), session: { CloudSession(uid: forged.uid, token: forged.token, expireAt: 0) }) { _ in }
            }
            #expect(error?.code == .notLoggedIn)
        }
    }
}

import Foundation
import Testing
import TetherAlink
import TetherCore
@testable import TetherCloud

/// A control answered `accepted` was lost when the cloud stopped before sending it (security
/// review, finding 6): commands are now resumed when the device is back, each at most until its
/// answer deadline.
@Suite("Commands survive a cloud restart", .timeLimit(.minutes(2)))
struct CommandResumeTests {
    @Test("accepted and sent writes are sent when the device is back after a restart; service calls are not sent twice; late or overtaken ones are not", arguments: TestEngine.allCases)
    func resume(engine: TestEngine) async throws {
        var gateway = CloudHarness.testGateway
        gateway.answerTimeoutSeconds = 60
        let configuration = gateway
        try await engine.withFreshDatabase { url in
            let first = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let (app, device, ids) = try await Self.closing(first) { try await CloudHarness.serve(database: first, gateway: configuration) { cloud in
                let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
                // What a node that stopped at the wrong moment left in the ledger: a write accepted
                // and never sent, a write marked sent and never sent, a service call marked sent,
                // and a write accepted too long ago.
                let ledger = CommandLedger(database: cloud.database)
                func insert(_ kind: CommandKind, _ body: JSONValue, sent: Bool) async throws -> Int64 {
                    let record = try await ledger.insert(did: device.did, uid: user.uid, appID: cloud.app.appID, kind: kind, body: body, state: .accepted, queueUntilMs: nil)
                    if sent { try await ledger.move(record.id, from: [.accepted], to: .sent) }
                    return record.id
                }
                // A write sent, then overtaken by a later one the device acknowledged.
                let overtaken = try await insert(.attrs, ["Brightness": 5], sent: true)
                let newer = try await insert(.attrs, ["Brightness": 6], sent: true)
                try await ledger.move(newer, from: [.sent], to: .acknowledged, code: 200)
                let accepted = try await insert(.attrs, ["Brightness": 40], sent: false)
                let sent = try await insert(.attrs, ["LightSwitch": true], sent: true)
                let service = try await insert(.service, ["identifier": "Reboot", "params": ["delay": 3]], sent: true)
                let stale = try await insert(.attrs, ["Brightness": 1], sent: false)
                try await cloud.database.query("UPDATE commands SET created_ms = created_ms - 120000 WHERE id = $1", .int(stale))
                return (cloud.app, device, (accepted: accepted, sent: sent, service: service, stale: stale, overtaken: overtaken))
            } }

            let second = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            try await Self.closing(second) { try await CloudHarness.serve(database: second, gateway: configuration, app: app) { cloud in
                try await GatewayFixtures.withDevice(cloud, device) { client in
                    let downlinks = client.downlinks()
                    var received: [String: AlinkDownlink] = [:]
                    while received.count < 2 {
                        let downlink = try await GatewayFixtures.nextDownlink(downlinks, timeout: .seconds(10))
                        if let id = downlink.request?.id { received[id] = downlink }
                    }
                    let write = try #require(received[String(ids.accepted)])
                    #expect(write.request?.params == ["Brightness": 40])
                    let resent = try #require(received[String(ids.sent)])
                    #expect(resent.request?.params == ["LightSwitch": 1])
                    for downlink in [write, resent] { try await client.reply(downlink.request!.reply(), to: downlink) }
                    _ = try await GatewayFixtures.waitForCommand(cloud, ids.accepted, state: .acknowledged)
                    _ = try await GatewayFixtures.waitForCommand(cloud, ids.sent, state: .acknowledged)
                    // Nothing else arrives: not the service call, not the stale write, not the overtaken one.
                    await #expect(throws: TestFailure.self) { _ = try await GatewayFixtures.nextDownlink(client.downlinks(), timeout: .seconds(1)) }
                    let ledger = CommandLedger(database: cloud.database)
                    #expect(try await ledger.find(ids.service)?.state == .sent)
                    let stale = try await ledger.find(ids.stale)?.state
                    #expect(stale == .accepted || stale == .expired)
                    let overtaken = try await ledger.find(ids.overtaken)?.state
                    #expect(overtaken == .sent || overtaken == .expired)
                }
            } }
        }
    }

    /// Runs `body`, then closes `database` whether it threw or not.
    static func closing<Result>(_ database: any SQLDatabase, _ body: () async throws -> Result) async throws -> Result {
        do {
            let result = try await body()
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }
}

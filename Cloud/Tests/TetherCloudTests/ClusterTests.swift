import Foundation
import HTTPTypes
import NIOCore
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Two cloud nodes sharing one PostgreSQL database, joined by LISTEN/NOTIFY only.
@Suite("Several cloud nodes", .timeLimit(.minutes(1)))
struct ClusterTests {
    @Test("a device on node A, an app on node B: B's writes, RRPC calls and shadow reach the device, A's reports, answers and presence reach the app")
    func twoNodes() async throws {
        try await TestEngine.postgres.withFreshDatabase { url in
            let databaseA = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let databaseB = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let engineA = try #require(databaseA as? PostgresEngine)
            let engineB = try #require(databaseB as? PostgresEngine)
            let busA = PostgresClusterBus(engine: engineA, logger: TestEngine.logger)
            let busB = PostgresClusterBus(engine: engineB, logger: TestEngine.logger)
            var gatewayA = CloudHarness.testGateway
            gatewayA.nodeID = "node-a"
            var second = CloudHarness.testGateway
            second.nodeID = "node-b"
            let gatewayB = second
            try await CloudHarness.serve(database: databaseA, gateway: gatewayA, bus: busA) { nodeA in
                try await CloudHarness.serve(database: databaseB, gateway: gatewayB, bus: busB, app: nodeA.app) { nodeB in
                    let product = try await GatewayFixtures.lampProduct(nodeA)
                    let device = try await GatewayFixtures.device(nodeA, product: product)
                    let user = try await GatewayFixtures.user(nodeB, boundTo: [device])
                    try await M2MTestClient.with(nodeB, session: user, autoSubscribe: true) { app in
                        _ = try await app.onlineStatus(online: false)
                        try await GatewayFixtures.withDevice(nodeA, device) { client in
                            let downlinks = client.downlinks()
                            _ = try await app.onlineStatus(online: true)
                            try await app.send(.write(M2MWrite(sequence: .number(7), did: device.did, attrs: ["Brightness": 33])))
                            let set = try await GatewayFixtures.nextDownlink(downlinks)
                            #expect(set.request?.params == ["Brightness": 33])
                            try await client.reply(set.request!.reply(), to: set)
                            #expect(try await app.writeAcknowledgement().sequence == .number(7))
                            #expect(try await client.postProperties(["Brightness": 33]).code == 200)
                            let noti = try await app.notification(.answering(7))
                            #expect(noti.attrs == ["Brightness": 33])
                            let report = try await app.notification(.report)
                            #expect(report.attrs == ["Brightness": 33])

                            // REST on node B, too.
                            let later = client.downlinks()
                            let rest = try await nodeB.call(.post, "/app/control/\(device.did)", token: user.token, json: ["attrs": ["LightSwitch": true]])
                            #expect(rest["state"] == "accepted", "\(rest.text)")
                            let second = try await GatewayFixtures.nextDownlink(later)
                            #expect(second.request?.params == ["LightSwitch": 1])

                            // RRPC on node B, answered by the device on node A, across the bus both ways.
                            let responder = RRPCTests.answering(client) { $0.reversed() }
                            defer { responder.cancel() }
                            let rrpc = try await nodeB.call(.post, "/app/devices/\(device.did)/rrpc", token: user.token, json: RRPCCallBody(payload: [1, 2, 3]).json)
                            #expect(try RRPCAnswerBody(json: try #require(rrpc.json)).payload == [3, 2, 1], "\(rrpc.text)")

                            // The shadow desired on node B is pushed to the device on node A.
                            let pushes = client.downlinks()
                            let desired = ShadowDesiredBody(desired: .merged(["mode": "eco"]), version: 1)
                            let written = try await nodeB.call(.put, "/app/devices/\(device.did)/shadow", token: user.token, json: desired.json)
                            #expect(written.status == .ok, "\(written.text)")
                            let push = try await GatewayFixtures.nextDownlink(pushes)
                            guard case .control(let shadow) = try ShadowReply(parsing: push.payload.readableBytesView) else {
                                Issue.record("no shadow control message on node A")
                                return
                            }
                            #expect(shadow.desired == ["mode": "eco"] && shadow.version == 1)
                        }
                        _ = try await app.onlineStatus(online: false)
                    }
                }
            }
            await databaseA.close()
            await databaseB.close()
        }
    }

    @Test("a revocation on node A ends the user's WebSocket sessions on node B at once")
    func revocationAcrossNodes() async throws {
        try await TestEngine.postgres.withFreshDatabase { url in
            let databaseA = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let databaseB = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let busA = PostgresClusterBus(engine: try #require(databaseA as? PostgresEngine), logger: TestEngine.logger)
            let busB = PostgresClusterBus(engine: try #require(databaseB as? PostgresEngine), logger: TestEngine.logger)
            try await CommandResumeTests.closing(databaseA) { try await CommandResumeTests.closing(databaseB) {
            try await CloudHarness.serve(database: databaseA, bus: busA) { nodeA in
                try await CloudHarness.serve(database: databaseB, bus: busB, app: nodeA.app) { nodeB in
                    await busA.ready()
                    await busB.ready()
                    let session = try await nodeA.register("roaming")
                    let second = try await nodeA.call(.post, "/app/login", json: ["username": "roaming", "password": "Passw0rd!"]).session()
                    try await M2MTestClient.with(nodeB, session: session) { app in
                        #expect(try await nodeA.call(.put, "/app/users", token: session.token, json: ["old_pwd": "Passw0rd!", "new_pwd": "N3wPassw0rd!"]).status == .ok)
                        try await SessionRevocationTests.expectEnded(app)
                    }
                    // Already revoked by the password change: the login itself is refused.
                    await #expect(throws: TestFailure.self) {
                        try await M2MTestClient.with(nodeB, session: second) { _ in }
                    }
                }
            }
            } }
        }
    }

    @Test("rate limits count on every node together: registrations from one source spread over two nodes")
    func rateLimitsAcrossNodes() async throws {
        try await TestEngine.postgres.withFreshDatabase { url in
            let databaseA = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let databaseB = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let limited: @Sendable (inout CloudConfiguration) -> Void = { $0.abuse.registrationsPerSource = RateLimit(3, per: RateWindows.unending) }
            try await CommandResumeTests.closing(databaseA) { try await CommandResumeTests.closing(databaseB) {
                try await CloudHarness.serve(database: databaseA, configure: limited) { nodeA in
                    try await CloudHarness.serve(database: databaseB, app: nodeA.app, configure: limited) { nodeB in
                        let product = try await nodeA.admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
                        func register(_ index: Int, on node: CloudHarness) async throws -> APIResponse {
                            let form = try #require(DeviceRegistrationForm(productKey: product.productKey, mac: String(format: "00000000aa%02x", index), timestamp: Clock.unixNow()))
                            return try await DeviceFixtures.postRegistration(node, form.signed(with: product.productSecret).formEncoded)
                        }
                        #expect(try await register(0, on: nodeA).status == .created)
                        #expect(try await register(1, on: nodeB).status == .created)
                        #expect(try await register(2, on: nodeA).status == .created)
                        #expect(try await register(3, on: nodeB).errorCode == 9041, "the fourth from 127.0.0.1, whichever node it reaches")
                    }
                }
            } }
        }
    }
}

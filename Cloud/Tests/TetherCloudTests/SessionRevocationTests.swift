import Foundation
import HTTPTypes
import HummingbirdWSClient
import NIOWebSocket
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Every revocation ends, at once, what it concerns: REST refuses the token, and a WebSocket
/// session logged in with it is told why and closed (the security review found them writing
/// to devices after a password change).
@Suite("Revocation ends live sessions", .timeLimit(.minutes(2)))
struct SessionRevocationTests {
    /// The session ended: 9004 with the reason, then the close.
    static func expectEnded(_ app: M2MTestClient, timeout: Duration = .seconds(5)) async throws {
        let notice = try await app.invalid(code: 9004, timeout: timeout)
        #expect(notice.message.contains("log in again"))
        try await app.waitUntilClosed()
    }

    @Test("logout ends the session's WebSocket and its token; other sessions of the user go on", arguments: TestEngine.allCases)
    func logout(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let first = try await cloud.register("lou")
            let second = try await cloud.call(.post, "/app/login", json: ["username": "lou", "password": "Passw0rd!"]).session()
            try await M2MTestClient.with(cloud, session: second) { other in
                try await M2MTestClient.with(cloud, session: first) { app in
                    #expect(try await cloud.call(.post, "/app/logout", token: first.token).status == .ok)
                    try await Self.expectEnded(app)
                }
                #expect(try await cloud.call(.get, "/app/users", token: first.token).errorCode == 9004)
                // The other session is untouched.
                try await other.send(.ping)
                try await other.pong()
                #expect(!other.isClosed)
                #expect(try await cloud.call(.get, "/app/users", token: second.token).status == .ok)
            }
        }
    }

    @Test("a connection logged in as one user cannot log in as another: a revocation of the first still ends it", arguments: [TestEngine.sqlite])
    func oneUserPerConnection(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let victim = try await cloud.register("victim")
            let attacker = try await cloud.register("attacker")
            let appID = cloud.app.appID
            try await M2MTestClient.with(cloud, session: victim) { app in
                try await app.send(.login(M2MLogin(appID: appID, uid: attacker.uid, token: attacker.token)))
                let refused = try await app.loginResult()
                #expect(refused.success == false)
                #expect(refused.errorCode == 9004)
                #expect(try await cloud.call(.put, "/app/users", token: victim.token, json: ["old_pwd": "Passw0rd!", "new_pwd": "N3wPassw0rd!"]).status == .ok)
                try await Self.expectEnded(app)
            }
        }
    }

    @Test("a password change ends every WebSocket session of the user; the new token works", arguments: TestEngine.allCases)
    func passwordChange(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let session = try await cloud.register("pat")
            let newToken = try await M2MTestClient.with(cloud, session: session) { app in
                let change = try await cloud.call(.put, "/app/users", token: session.token, json: ["old_pwd": "Passw0rd!", "new_pwd": "N3wPassw0rd!"])
                #expect(change.status == .ok)
                try await Self.expectEnded(app)
                return change["token"]?.stringValue
            }
            let token = try #require(newToken)
            let renewed = UserSession(uid: session.uid, token: token, expireAt: 0)
            try await M2MTestClient.with(cloud, session: renewed) { app in
                try await app.send(.ping)
                try await app.pong()
            }
        }
    }

    @Test("the list of sessions, and revoking one of them, closes its WebSocket at once", arguments: TestEngine.allCases)
    func sessionsListAndRevoke(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let phone = try await cloud.register("sam")
            var agent = HTTPFields()
            agent[.userAgent] = "laptop/1.0"
            let laptop = try await cloud.call(.post, "/app/login", headers: agent, json: ["username": "sam", "password": "Passw0rd!"]).session()
            let list = try await cloud.call(.get, "/app/sessions", token: phone.token)
            let sessions = try #require(list["sessions"]?.arrayValue)
            #expect(sessions.count == 2)
            #expect(sessions.filter { $0["current"] == true }.count == 1)
            let laptopEntry = try #require(sessions.first { $0["user_agent"] == "laptop/1.0" })
            #expect(laptopEntry["current"] == false)
            #expect(laptopEntry["source"] == "127.0.0.1")
            let id = try #require(laptopEntry["id"]?.stringValue)
            #expect(!laptop.token.contains(id) && id.count == 16, "the id names a session without revealing its token")

            // Another user can neither see nor end these sessions.
            let stranger = try await cloud.register("stranger")
            #expect(try await cloud.call(.delete, "/app/sessions/\(id)", token: stranger.token).errorCode == 9999)
            #expect(try await cloud.call(.get, "/app/sessions", token: stranger.token)["sessions"]?.arrayValue?.count == 1)

            try await M2MTestClient.with(cloud, session: laptop) { app in
                #expect(try await cloud.call(.delete, "/app/sessions/\(id)", token: phone.token).status == .ok)
                try await Self.expectEnded(app)
            }
            #expect(try await cloud.call(.get, "/app/users", token: laptop.token).errorCode == 9004)
            #expect(try await cloud.call(.get, "/app/users", token: phone.token).status == .ok)
            #expect(try await cloud.call(.delete, "/app/sessions/\(id)", token: phone.token).errorCode == 9999)
            #expect(try await cloud.call(.delete, "/app/sessions/not-hex", token: phone.token).errorCode == 9015)
        }
    }

    @Test("a refreshed token keeps working for its grace, then its WebSocket session ends", arguments: [TestEngine.sqlite])
    func refreshGrace(engine: TestEngine) async throws {
        var policy = CloudHarness.testPolicy
        // Long enough that the requests right after the refresh are well inside it on a busy machine.
        policy.refreshGrace = 8
        try await CloudHarness.run(engine, policy: policy) { cloud in
            let old = try await cloud.register("ray")
            try await M2MTestClient.with(cloud, session: old) { app in
                let renewed = try await cloud.call(.post, "/app/token/refresh", token: old.token).session()
                #expect(renewed.token != old.token)
                // Within its grace the old token works, but it is not renewed twice.
                #expect(try await cloud.call(.post, "/app/token/refresh", token: old.token).errorCode == 9004)
                // Requests in flight with the old token still succeed…
                #expect(try await cloud.call(.get, "/app/users", token: old.token).status == .ok)
                try await app.send(.ping)
                try await app.pong()
                // …until the grace ends.
                try await Self.expectEnded(app, timeout: .seconds(30))
                #expect(try await cloud.call(.get, "/app/users", token: old.token).errorCode == 9006)
                #expect(try await cloud.call(.get, "/app/users", token: renewed.token).status == .ok)
                #expect(try await cloud.call(.post, "/app/token/refresh", token: old.token).errorCode != nil, "a replaced token mints nothing")
            }
        }
    }

    @Test("an operator disabling an account ends its sessions; it logs in nowhere until enabled", arguments: TestEngine.allCases)
    func disabledAccount(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let session = try await cloud.register("dora")
            try await M2MTestClient.with(cloud, session: session) { app in
                try await cloud.admin.setUserDisabled(uid: session.uid, true, bus: cloud.node.bus)
                try await Self.expectEnded(app)
            }
            #expect(try await cloud.call(.get, "/app/users", token: session.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": "dora", "password": "Passw0rd!"]).errorCode == 9026)
            try await cloud.admin.setUserDisabled(uid: session.uid, false, bus: cloud.node.bus)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": "dora", "password": "Passw0rd!"]).status == .ok)
            await #expect(throws: CloudAPIError.self) { try await cloud.admin.setUserDisabled(uid: "nobody", true) }
        }
    }

    @Test("unbinding downgrades a live session: no more reports of the device, writes refused", arguments: TestEngine.allCases)
    func unbinding(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, gateway: CloudHarness.testGateway) { cloud in
            let (_, device, user) = try await GatewayFixtures.boundLamp(cloud)
            try await GatewayFixtures.withDevice(cloud, device) { client in
                try await M2MTestClient.with(cloud, session: user, autoSubscribe: true) { app in
                    _ = try await app.onlineStatus(online: true)
                    #expect(try await client.postProperties(["Brightness": 10]).code == 200)
                    _ = try await app.notification()
                    #expect(try await cloud.call(.delete, "/app/bindings", token: user.token, json: ["devices": [["did": .string(device.did)]]])["success"] == [.string(device.did)])
                    _ = try await app.bindingChanged(bound: false)
                    try await app.send(.write(M2MWrite(sequence: .number(3), did: device.did, attrs: ["Brightness": 90])))
                    let refused = try await app.invalid(answering: 3)
                    #expect(refused.errorCode == 9017)
                    #expect(try await client.postProperties(["Brightness": 11]).code == 200)
                    try await app.send(.ping)
                    try await app.pong()
                    #expect(app.pending("s2c_noti").isEmpty, "a report after the unbinding reached the former user")
                    #expect(!app.isClosed, "an unbinding ends the device's subscription, not the session")
                }
            }
        }
    }

    @Test("a WebSocket that never logs in is closed after the login deadline", arguments: [TestEngine.sqlite])
    func loginDeadline(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, configure: { $0.http.webSocketLoginTimeout = .seconds(1) }) { cloud in
            let close = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(cloud.httpPort)/ws/app/v1", logger: GatewayFixtures.quietLogger) { inbound, _, _ in
                for try await _ in inbound.messages(maxSize: 1 << 16) {}
            }
            // Closed by the server, for this reason: nothing else in the test would close it.
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason == "no login_req in time")
        }
    }
}

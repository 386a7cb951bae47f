import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

@Suite("Accounts")
struct AccountTests {
    @Test("register by username, log in, read and update the profile", arguments: TestEngine.allCases)
    func usernameFlow(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let registered = try await cloud.register("alice")
            #expect(registered.expireAt > Int64(Date().timeIntervalSince1970) + 6 * 24 * 3600)

            let login = try await cloud.call(.post, "/app/login", json: ["username": "alice", "password": "Passw0rd!", "lang": "en"])
            #expect(login.status == .ok)
            let session = try login.session()
            #expect(session.uid == registered.uid)
            #expect(session.token != registered.token)

            // Both tokens stay valid: every login issues a new one.
            for token in [registered.token, session.token] {
                let info = try await cloud.call(.get, "/app/users", token: token)
                #expect(info["username"] == "alice")
                #expect(info["is_anonymous"] == .bool(false))
            }

            let update = try await cloud.call(.put, "/app/users", token: session.token, json: ["name": "Alice", "gender": "F", "birthday": "1990-02-03"])
            #expect(update.status == .ok)
            #expect(update["updatedAt"]?.stringValue?.hasSuffix("Z") == true)
            let info = try await cloud.call(.get, "/app/users", token: session.token)
            #expect(info["name"] == "Alice")
            #expect(info["gender"] == "F")

            let badGender = try await cloud.call(.put, "/app/users", token: session.token, json: ["gender": "X"])
            #expect(badGender.errorCode == 9015)
        }
    }

    @Test("registration errors: duplicate, weak password, missing fields, bad body", arguments: TestEngine.allCases)
    func registrationErrors(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            _ = try await cloud.register("bob")
            let duplicate = try await cloud.call(.post, "/app/users", json: ["username": "bob", "password": "Passw0rd!"])
            #expect(duplicate.errorCode == 9019)
            #expect(duplicate.status == .badRequest)

            for weak in ["short1A", "alllowercase1", "ALLUPPER123", "NoDigitsHere"] {
                let response = try await cloud.call(.post, "/app/users", json: ["username": "carol", "password": .string(weak)])
                #expect(response.errorCode == 9015, "\(weak) was accepted")
            }
            let missing = try await cloud.call(.post, "/app/users", json: ["username": "carol"])
            #expect(missing.errorCode == 9015)
            #expect(missing["detail"] == "password is required")
            let wrongType = try await cloud.call(.post, "/app/users", json: ["username": 12, "password": "Passw0rd!"])
            #expect(wrongType.errorCode == 9015)
            let looksLikeEmail = try await cloud.call(.post, "/app/users", json: ["username": "a@b.c", "password": "Passw0rd!"])
            #expect(looksLikeEmail.errorCode == 9015)

            var headers = HTTPFields()
            headers[HTTPField.Name("X-Gizwits-Application-Id")!] = cloud.app.appID
            headers[.contentType] = "application/json"
            let garbage = try await cloud.client.execute(uri: "/app/users", method: .post, headers: headers, body: .init(string: "{not json"))
            #expect(garbage.status == .badRequest)
            #expect(try JSONValue.parse(String(buffer: garbage.body))["error_code"] == .int(9015))
        }
    }

    @Test("wrong app id, bad token, expired token", arguments: TestEngine.allCases)
    func appAndTokenErrors(engine: TestEngine) async throws {
        var policy = CloudHarness.testPolicy
        policy.tokenLifetime = 0
        try await CloudHarness.run(engine, policy: policy) { cloud in
            let noApp = try await cloud.call(.post, "/app/login", appID: "", json: ["username": "x", "password": "y"])
            #expect(noApp.errorCode == 9003)
            let wrongApp = try await cloud.call(.get, "/status", appID: "0123456789abcdef0123456789abcdef")
            #expect(wrongApp.errorCode == 9003)
            let status = try await cloud.call(.get, "/status")
            #expect(status["status"]?["version"]?.stringValue == TetherVersion.current)

            let session = try await cloud.register("dave")
            let expired = try await cloud.call(.get, "/app/users", token: session.token)
            #expect(expired.errorCode == 9006)
            let unknown = try await cloud.call(.get, "/app/users", token: "00000000000000000000000000000000")
            #expect(unknown.errorCode == 9004)
            let none = try await cloud.call(.get, "/app/users")
            #expect(none.errorCode == 9004)

            // A token is valid only with the app it was issued for.
            let other = try await cloud.admin.createApp(name: "other")
            let crossApp = try await cloud.call(.get, "/app/users", token: session.token, appID: other.appID)
            #expect(crossApp.errorCode == 9004)
        }
    }

    @Test("wrong passwords lock out the source that sent them, not the account's owner elsewhere", arguments: TestEngine.allCases)
    func lockout(engine: TestEngine) async throws {
        try await CloudHarness.run(engine, configure: { configuration in
            configuration.abuse.loginFailuresPerAccountAndSource = RateLimit(3, per: RateWindows.unending)
            configuration.abuse.loginFailuresPerAccount = RateLimit(7, per: RateWindows.unending)
            // Requests come from 127.0.0.1 and name their client in X-Forwarded-For, as behind a proxy.
            configuration.trustedProxies = ["127.0.0.1"]
        }) { cloud in
            _ = try await cloud.register("erin")
            func login(_ password: String, from source: String) async throws -> APIResponse {
                try await cloud.call(.post, "/app/login", headers: [HTTPField.Name("X-Forwarded-For")!: source], json: ["username": "erin", "password": .string(password)])
            }
            for _ in 0..<2 {
                #expect(try await login("Wrong000!", from: "192.0.2.66").errorCode == 9020)
            }
            let locking = try await login("Wrong000!", from: "192.0.2.66")
            #expect(locking.errorCode == 9041)
            #expect(locking.status == .tooManyRequests)
            // That source is locked: even the right password is refused, with how long to wait.
            let locked = try await login("Passw0rd!", from: "192.0.2.66")
            #expect(locked.errorCode == 9041)
            // Counted in windows aligned on the clock: locked until this window ends.
            let wait = Int(locked.headers[.retryAfter] ?? "") ?? 0
            #expect(wait > 0 && wait <= RateWindows.unending)
            // The owner, elsewhere, is not.
            #expect(try await login("Passw0rd!", from: "198.51.100.7").status == .ok)
            // An IPv6 attacker is one /64, whatever address in it they use.
            #expect(try await login("Wrong000!", from: "2001:db8:1:2::1").errorCode == 9020)
            #expect(try await login("Wrong000!", from: "2001:db8:1:2:ffff::9").errorCode == 9020)
            #expect(try await login("Wrong000!", from: "2001:db8:1:2:abcd::1").errorCode == 9041)
            // Attempts from many sources together (8 counted: every refused one too, and the
            // owner's success taken back) lock the account for every source without a session…
            #expect(try await login("Passw0rd!", from: "203.0.113.9").errorCode == 9041)
            // …but not for the owner's, which has one.
            #expect(try await login("Passw0rd!", from: "198.51.100.7").status == .ok)

            let unknownUser = try await cloud.call(.post, "/app/login", json: ["username": "nobody", "password": "Passw0rd!"])
            #expect(unknownUser.errorCode == 9020)
        }
    }

    @Test("a slowed login still succeeds with the right password, and success resets the count", arguments: [TestEngine.sqlite])
    func slowdownResets(engine: TestEngine) async throws {
        var policy = CloudHarness.testPolicy
        policy.slowAfterFailures = 1
        policy.delayPerFailure = 0.05
        try await CloudHarness.run(engine, policy: policy, configure: RateWindows.unendingLoginLimits) { cloud in
            let session = try await cloud.register("fay")
            for _ in 0..<3 {
                #expect(try await cloud.call(.post, "/app/login", json: ["username": "fay", "password": "Nope0000!"]).errorCode == 9020)
            }
            #expect(try await cloud.call(.post, "/app/login", json: ["username": "fay", "password": "Passw0rd!"]).status == .ok)
            let failures = try await cloud.database.first("SELECT count FROM rate_limits WHERE key = $1", .text("login:\(session.uid):127.0.0.1"))
            #expect(failures == nil, "a login from a source clears that source's failures")
        }
    }

    @Test("anonymous users keep their uid per phone_id and convert with their bindings", arguments: TestEngine.allCases)
    func anonymousUsers(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let first = try await cloud.call(.post, "/app/users", json: ["phone_id": "phone-1"]).session()
            let again = try await cloud.call(.post, "/app/users", json: ["phone_id": "phone-1"]).session()
            let other = try await cloud.call(.post, "/app/users", json: ["phone_id": "phone-2"]).session()
            #expect(first.uid == again.uid)
            #expect(first.uid != other.uid)
            #expect(try await cloud.call(.get, "/app/users", token: first.token)["is_anonymous"] == .bool(true))

            let device = try await DeviceFixtures.registeredDevice(cloud)
            let bind = try await cloud.call(.post, "/app/bindings", token: first.token, json: ["devices": [["did": .string(device.did), "passcode": .string(device.passcode)]]])
            #expect(bind["success"] == [.string(device.did)])

            let convert = try await cloud.call(.put, "/app/users", token: first.token, json: ["username": "gina", "password": "Passw0rd!"])
            #expect(convert.status == .ok)
            let login = try await cloud.call(.post, "/app/login", json: ["username": "gina", "password": "Passw0rd!"]).session()
            #expect(login.uid == first.uid)
            let devices = try await cloud.call(.get, "/app/bindings", token: login.token)
            #expect(devices["devices"]?.arrayValue?.count == 1)
            #expect(try await cloud.call(.get, "/app/users", token: login.token)["is_anonymous"] == .bool(false))

            // A real user cannot take a second username.
            let again2 = try await cloud.call(.put, "/app/users", token: login.token, json: ["username": "gina2", "password": "Passw0rd!"])
            #expect(again2.errorCode == 9015)
        }
    }

    @Test("changing the password revokes every token and answers a new one", arguments: TestEngine.allCases)
    func passwordChange(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let session = try await cloud.register("hank")
            let second = try await cloud.call(.post, "/app/login", json: ["username": "hank", "password": "Passw0rd!"]).session()
            let wrongOld = try await cloud.call(.put, "/app/users", token: session.token, json: ["old_pwd": "Wrong000!", "new_pwd": "N3wPassword!"])
            #expect(wrongOld.errorCode == 9020)
            let weakNew = try await cloud.call(.put, "/app/users", token: session.token, json: ["old_pwd": "Passw0rd!", "new_pwd": "weak"])
            #expect(weakNew.errorCode == 9015)

            let change = try await cloud.call(.put, "/app/users", token: session.token, json: ["old_pwd": "Passw0rd!", "new_pwd": "N3wPassword!"])
            #expect(change.status == .ok)
            let fresh = try #require(change["token"]?.stringValue)
            for old in [session.token, second.token] {
                #expect(try await cloud.call(.get, "/app/users", token: old).errorCode == 9004)
            }
            #expect(try await cloud.call(.get, "/app/users", token: fresh).status == .ok)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": "hank", "password": "Passw0rd!"]).errorCode == 9020)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": "hank", "password": "N3wPassword!"]).status == .ok)
        }
    }
}

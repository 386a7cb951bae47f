import Foundation
import HTTPTypes
import Testing
import TetherCore
@testable import TetherCloud

/// SMS codes and e-mail links, read back from the outbox the default sender writes.
@Suite("SMS codes and e-mail links")
struct VerificationTests {
    static func appToken(_ cloud: CloudHarness) async throws -> String {
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Gizwits-Application-Auth")!] = Secrets.md5(cloud.app.appID + cloud.app.appSecret)
        let response = try await cloud.call(.post, "/app/request_token", headers: headers)
        #expect(response.status == .ok, "\(response.text)")
        return try #require(response["token"]?.stringValue)
    }

    static func requestCode(_ cloud: CloudHarness, phone: String, appToken: String) async throws -> APIResponse {
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Gizwits-Application-Token")!] = appToken
        return try await cloud.call(.post, "/app/sms_code", headers: headers, json: ["phone": .string(phone)])
    }

    static func code(in message: OutgoingMessage?) throws -> String {
        let body = try #require(message?.body)
        let words = body.split(whereSeparator: { !$0.isNumber })
        return try #require(words.first { $0.count == 6 }.map(String.init))
    }

    @Test("request_token needs md5(appid + appsecret)", arguments: TestEngine.allCases)
    func appTokens(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Gizwits-Application-Auth")!] = Secrets.md5(cloud.app.appID + "wrong")
            #expect(try await cloud.call(.post, "/app/request_token", headers: headers).errorCode == 9038)
            let token = try await Self.appToken(cloud)
            #expect(try await Self.requestCode(cloud, phone: "+8613800000000", appToken: "bad").errorCode == 9004)
            #expect(try await Self.requestCode(cloud, phone: "+8613800000000", appToken: token).status == .ok)
        }
    }

    @Test("register by phone with the SMS code; codes are used up and rate limited", arguments: TestEngine.allCases)
    func phoneRegistration(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let token = try await Self.appToken(cloud)
            let phone = "+4915100000001"
            #expect(try await Self.requestCode(cloud, phone: phone, appToken: token).status == .ok)
            let throttled = try await Self.requestCode(cloud, phone: phone, appToken: token)
            #expect(throttled.errorCode == 9041)
            #expect(throttled.status == .tooManyRequests)
            #expect(try await Self.requestCode(cloud, phone: "12", appToken: token).errorCode == 9015)

            let code = try Self.code(in: try await cloud.lastMessage(to: phone))
            let wrong = code == "000000" ? "111111" : "000000"
            #expect(try await cloud.call(.post, "/app/users", json: ["phone": .string(phone), "password": "Passw0rd!", "code": .string(wrong)]).errorCode == 9010)
            let registered = try await cloud.call(.post, "/app/users", json: ["phone": .string(phone), "password": "Passw0rd!", "code": .string(code)])
            #expect(registered.status == .created, "\(registered.text)")
            // The code is used up.
            #expect(try await cloud.call(.post, "/app/users", json: ["phone": .string(phone), "password": "Passw0rd!", "code": .string(code)]).errorCode == 9010)
            // Phone numbers log in like usernames.
            #expect(try await cloud.call(.post, "/app/login", json: ["username": .string(phone), "password": "Passw0rd!"]).status == .ok)
        }
    }

    @Test("at most N codes per hour, and wrong guesses void a code", arguments: [TestEngine.sqlite])
    func hourlyLimitAndGuesses(engine: TestEngine) async throws {
        var policy = CloudHarness.testPolicy
        policy.smsMinimumInterval = 0
        policy.smsMaximumPerHour = 2
        policy.smsMaximumAttempts = 2
        try await CloudHarness.run(engine, policy: policy) { cloud in
            let token = try await Self.appToken(cloud)
            let phone = "5550001"
            #expect(try await Self.requestCode(cloud, phone: phone, appToken: token).status == .ok)
            #expect(try await Self.requestCode(cloud, phone: phone, appToken: token).status == .ok)
            #expect(try await Self.requestCode(cloud, phone: phone, appToken: token).errorCode == 9041)
            // Another number has its own budget.
            #expect(try await Self.requestCode(cloud, phone: "5550002", appToken: token).status == .ok)

            let code = try Self.code(in: try await cloud.lastMessage(to: phone))
            let wrong = code == "000000" ? "111111" : "000000"
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Gizwits-Application-Token")!] = token
            for _ in 0..<2 {
                #expect(try await cloud.call(.post, "/app/sms_code", headers: headers, json: ["phone": .string(phone), "code": .string(wrong)]).errorCode == 9010)
            }
            #expect(try await cloud.call(.post, "/app/sms_code", headers: headers, json: ["phone": .string(phone), "code": .string(code)]).errorCode == 9010)
        }
    }

    @Test("reset the password by SMS code", arguments: TestEngine.allCases)
    func resetByPhone(engine: TestEngine) async throws {
        var policy = CloudHarness.testPolicy
        policy.smsMinimumInterval = 0
        try await CloudHarness.run(engine, policy: policy) { cloud in
            let token = try await Self.appToken(cloud)
            let phone = "+8613900000002"
            _ = try await Self.requestCode(cloud, phone: phone, appToken: token)
            let code = try Self.code(in: try await cloud.lastMessage(to: phone))
            let session = try await cloud.call(.post, "/app/users", json: ["phone": .string(phone), "password": "Passw0rd!", "code": .string(code)]).session()

            _ = try await Self.requestCode(cloud, phone: phone, appToken: token)
            let resetCode = try Self.code(in: try await cloud.lastMessage(to: phone))
            let reset = try await cloud.call(.post, "/app/reset_password", json: ["phone": .string(phone), "new_pwd": "Differ3nt!", "code": .string(resetCode)])
            #expect(reset.status == .ok, "\(reset.text)")
            #expect(try await cloud.call(.get, "/app/users", token: session.token).errorCode == 9004)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": .string(phone), "password": "Differ3nt!"]).status == .ok)
        }
    }

    @Test("register by e-mail: login waits for the confirmation link; reset by e-mail link", arguments: TestEngine.allCases)
    func emailFlow(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let email = "ivy@example.org"
            let registered = try await cloud.call(.post, "/app/users", json: ["email": "Ivy@Example.org", "password": "Passw0rd!"])
            #expect(registered.status == .created)
            #expect(try await cloud.call(.post, "/app/users", json: ["email": .string(email), "password": "Passw0rd!"]).errorCode == 9022)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": .string(email), "password": "Passw0rd!"]).errorCode == 9077)

            let confirmation = try #require(try await cloud.lastMessage(to: email))
            let link = try #require(confirmation.body.split(separator: "\n").first { $0.contains("/app/users/confirm_email?token=") })
            let path = String(link[link.range(of: "/app/users")!.lowerBound...])
            #expect(try await cloud.call(.get, path).status == .ok)
            #expect(try await cloud.call(.get, path).errorCode == 9010)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": .string(email), "password": "Passw0rd!"]).status == .ok)

            // An unknown address is answered the same, and nothing is sent.
            #expect(try await cloud.call(.post, "/app/reset_password", json: ["email": "nobody@example.org"]).status == .ok)
            #expect(try await cloud.lastMessage(to: "nobody@example.org") == nil)

            #expect(try await cloud.call(.post, "/app/reset_password", json: ["email": .string(email)]).status == .ok)
            let mail = try #require(try await cloud.lastMessage(to: email))
            #expect(mail.subject.contains("Reset"))
            let tokenLine = try #require(mail.body.split(separator: "\n").first { $0.hasPrefix("token: ") })
            let resetToken = String(tokenLine.dropFirst("token: ".count))
            #expect(try await cloud.call(.post, "/app/reset_password/confirm", json: ["token": .string(resetToken), "new_pwd": "weak"]).errorCode == 9015)
            #expect(try await cloud.call(.post, "/app/reset_password/confirm", json: ["token": .string(resetToken), "new_pwd": "Differ3nt!"]).status == .ok)
            #expect(try await cloud.call(.post, "/app/reset_password/confirm", json: ["token": .string(resetToken), "new_pwd": "Differ3nt!"]).errorCode == 9010)
            #expect(try await cloud.call(.post, "/app/login", json: ["username": .string(email), "password": "Differ3nt!"]).status == .ok)
        }
    }
}

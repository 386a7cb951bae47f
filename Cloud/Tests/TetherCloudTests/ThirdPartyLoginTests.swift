import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

/// Third-party login: ID tokens signed by a test key, verified against a JWKS served by a local
/// HTTP server on loopback.
@Suite("Third-party login")
struct ThirdPartyLoginTests {
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var iss: IssuerClaim
        var aud: AudienceClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A third party: a key pair, and its public half published as a JWKS on a loopback port.
    static func withIssuer<Result: Sendable>(_ body: @Sendable (_ jwksURL: String, _ signer: JWTKeyCollection) async throws -> Result) async throws -> Result {
        let key = ES256PrivateKey()
        let parameters = try #require(key.parameters)
        let jwks: JSONValue = ["keys": [[
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "test-key",
            "x": .string(parameters.x), "y": .string(parameters.y),
        ]]]
        let router = Router()
        router.get("/jwks.json") { _, _ in Response.json(jwks) }
        let issuer = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let signer = await JWTKeyCollection().add(ecdsa: key, kid: "test-key")
        return try await issuer.test(.live) { client in
            try await body("http://127.0.0.1:\(client.port!)/jwks.json", signer)
        }
    }

    static func token(_ signer: JWTKeyCollection, subject: String, issuer: String = "https://id.example", audience: String = "tether-app", expiresIn: TimeInterval = 600) async throws -> String {
        try await signer.sign(Claims(
            sub: .init(value: subject), iss: .init(value: issuer), aud: .init(value: [audience]),
            exp: .init(value: Date().addingTimeInterval(expiresIn))
        ), kid: "test-key")
    }

    @Test("a verified ID token logs in, the same subject as the same user", arguments: TestEngine.allCases)
    func login(engine: TestEngine) async throws {
        try await Self.withIssuer { jwksURL, signer in
            try await CloudHarness.run(engine) { cloud in
                let form: (String, String) -> JSONValue = { uid, token in ["src": "google", "uid": .string(uid), "token": .string(token)] }
                let token = try await Self.token(signer, subject: "user-123")

                let unconfigured = try await cloud.call(.post, "/app/users", json: form("user-123", token))
                #expect(unconfigured.errorCode == 9015)

                try await cloud.admin.configureThirdParty(
                    appID: cloud.app.appID,
                    issuer: ThirdPartyIssuer(jwksURL: jwksURL, issuer: "https://id.example", audience: "tether-app")
                )
                let first = try await cloud.call(.post, "/app/users", json: form("user-123", "Bearer " + token)).session()
                let second = try await cloud.call(.post, "/app/users", json: form("user-123", try await Self.token(signer, subject: "user-123"))).session()
                #expect(first.uid == second.uid)
                #expect(try await cloud.call(.get, "/app/users", token: second.token).status == .ok)
                let other = try await cloud.call(.post, "/app/users", json: form("user-456", try await Self.token(signer, subject: "user-456"))).session()
                #expect(other.uid != first.uid)
            }
        }
    }

    @Test("forged, expired and misaddressed tokens are refused", arguments: [TestEngine.sqlite])
    func refusals(engine: TestEngine) async throws {
        try await Self.withIssuer { jwksURL, signer in
            try await CloudHarness.run(engine) { cloud in
                try await cloud.admin.configureThirdParty(
                    appID: cloud.app.appID,
                    issuer: ThirdPartyIssuer(jwksURL: jwksURL, issuer: "https://id.example", audience: "tether-app")
                )
                func attempt(_ token: String, uid: String = "u1", src: String = "google") async throws -> APIResponse {
                    try await cloud.call(.post, "/app/users", json: ["src": .string(src), "uid": .string(uid), "token": .string(token)])
                }
                let forger = await JWTKeyCollection().add(ecdsa: ES256PrivateKey(), kid: "test-key")
                #expect(try await attempt(try await Self.token(forger, subject: "u1")).errorCode == 9004)
                #expect(try await attempt(try await Self.token(signer, subject: "u1", expiresIn: -60)).errorCode == 9006)
                #expect(try await attempt(try await Self.token(signer, subject: "u1", issuer: "https://evil.example")).errorCode == 9004)
                #expect(try await attempt(try await Self.token(signer, subject: "u1", audience: "another-app")).errorCode == 9004)
                #expect(try await attempt(try await Self.token(signer, subject: "u2")).errorCode == 9004)
                #expect(try await attempt("not.a.jwt").errorCode == 9004)
                #expect(try await attempt(try await Self.token(signer, subject: "u1"), src: "myspace").errorCode == 9015)
                #expect(try await cloud.database.query("SELECT uid FROM users").isEmpty)
            }
        }
    }
}

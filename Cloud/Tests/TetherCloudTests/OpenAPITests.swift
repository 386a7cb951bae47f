import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

@Suite("OpenAPI document")
struct OpenAPITests {
    @Test("every documented operation is served, and the document is well formed")
    func documentMatchesRoutes() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let document = cloud.validator.document
            #expect(document["openapi"] == "3.0.3")
            let paths = try #require(document["paths"]?.objectValue)
            var operations = 0
            for path in paths.keys {
                for (method, operation) in try #require(paths[path]?.objectValue).keys.map({ ($0, paths[path]![$0]!) }) {
                    operations += 1
                    #expect(operation["responses"]?["default"] != nil, "\(method) \(path) documents no error answer")
                    for parameter in OpenAPIDocument.pathParameters(path) {
                        let declared = operation["parameters"]?.arrayValue?.contains { $0["name"] == .string(parameter) && $0["in"] == "path" }
                        #expect(declared == true, "\(method) \(path) does not declare {\(parameter)}")
                    }
                    let concrete = Self.concrete(path)
                    let response = try await cloud.client.execute(uri: concrete, method: HTTPRequest.Method(method.uppercased())!)
                    let code = try? JSONValue.parse(String(buffer: response.body))["error_code"]
                    #expect(code != .int(9999), "\(method) \(path) is documented but not routed")
                }
            }
            #expect(operations == 107)
            // An undocumented path is not routed either.
            let unknown = try await cloud.call(.get, "/app/undocumented")
            #expect(unknown.errorCode == 9999)
            #expect(unknown.status == .notFound)
        }
    }

    /// Every operation that the document says needs an app id, a user token or an app token
    /// refuses a request without one, a wrong one and (for user tokens) an expired one.
    @Test("every protected endpoint checks its credentials", arguments: TestEngine.allCases)
    func credentialsOnEveryEndpoint(engine: TestEngine) async throws {
        var policy = CloudHarness.testPolicy
        policy.tokenLifetime = 0
        try await CloudHarness.run(engine, policy: policy) { cloud in
            let expired = try await cloud.register("expired").token
            let paths = try #require(cloud.validator.document["paths"]?.objectValue)
            var checked = 0
            for path in paths.keys {
                let item = try #require(paths[path]?.objectValue)
                for method in item.keys {
                    let schemes = Set(item[method]?["security"]?.arrayValue?.first?.objectValue?.keys ?? [])
                    guard !schemes.isEmpty else { continue }
                    let uri = Self.concrete(path)
                    let httpMethod = HTTPRequest.Method(method.uppercased())!
                    checked += 1
                    let wrongApp = try await cloud.call(httpMethod, uri, token: expired, appID: "0123456789abcdef0123456789abcdef")
                    #expect(wrongApp.errorCode == 9003, "\(method) \(path) without a valid app id: \(wrongApp.text)")
                    if schemes.contains("userToken") {
                        let noToken = try await cloud.call(httpMethod, uri)
                        #expect(noToken.errorCode == 9004, "\(method) \(path) without a token: \(noToken.text)")
                        let badToken = try await cloud.call(httpMethod, uri, token: "ffffffffffffffffffffffffffffffff")
                        #expect(badToken.errorCode == 9004, "\(method) \(path) with a wrong token: \(badToken.text)")
                        let expiredToken = try await cloud.call(httpMethod, uri, token: expired)
                        #expect(expiredToken.errorCode == 9006, "\(method) \(path) with an expired token: \(expiredToken.text)")
                    }
                    if schemes.contains("appToken") {
                        let noAppToken = try await cloud.call(httpMethod, uri)
                        #expect(noAppToken.errorCode == 9004, "\(method) \(path) without an app token: \(noAppToken.text)")
                    }
                    if schemes.contains("appAuth") {
                        let noAuth = try await cloud.call(httpMethod, uri)
                        #expect(noAuth.errorCode == 9038, "\(method) \(path) without Application-Auth: \(noAuth.text)")
                    }
                }
            }
            #expect(checked >= 15)
        }
    }

    /// A documented path with every `{parameter}` filled in.
    static func concrete(_ path: String) -> String {
        var result = path
        for parameter in OpenAPIDocument.pathParameters(path) {
            result = result.replacingOccurrences(of: "{\(parameter)}", with: parameter == "id" ? "12345" : "unknown-\(parameter)")
        }
        return result
    }

    @Test("the validator notices a broken answer")
    func validatorCatchesMismatch() throws {
        let document: JSONValue = ["components": ["schemas": ["Thing": ["type": "object", "required": ["a"], "properties": ["a": ["type": "integer"]]]]]]
        let validator = SchemaValidator(document: document)
        #expect(validator.problems(["a": 1], against: ["$ref": "#/components/schemas/Thing"]).isEmpty)
        #expect(!validator.problems(["a": "1"], against: ["$ref": "#/components/schemas/Thing"]).isEmpty)
        #expect(!validator.problems(["b": 1], against: ["$ref": "#/components/schemas/Thing"]).isEmpty)
        #expect(SchemaValidator.path("/app/bindings/abc", matches: "/app/bindings/{did}"))
        #expect(!SchemaValidator.path("/app/bindings", matches: "/app/bindings/{did}"))
    }
}

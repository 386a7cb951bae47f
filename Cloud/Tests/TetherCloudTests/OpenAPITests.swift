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
                    let concrete = path.replacingOccurrences(of: "{did}", with: "unknown-did")
                    let response = try await cloud.client.execute(uri: concrete, method: HTTPRequest.Method(method.uppercased())!)
                    let code = try? JSONValue.parse(String(buffer: response.body))["error_code"]
                    #expect(code != .int(9999), "\(method) \(path) is documented but not routed")
                }
            }
            #expect(operations == 23)
            // An undocumented path is not routed either.
            let unknown = try await cloud.call(.get, "/app/undocumented")
            #expect(unknown.errorCode == 9999)
            #expect(unknown.status == .notFound)
        }
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

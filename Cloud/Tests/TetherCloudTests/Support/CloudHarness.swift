import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TetherCore
@testable import TetherCloud

/// A live cloud on a loopback port over a fresh database, with one app registered.
struct CloudHarness: Sendable {
    let database: any SQLDatabase
    let admin: Administration
    let app: Administration.CreatedApp
    let client: any TestClientProtocol
    /// The server's own OpenAPI document; every answer is checked against it.
    let validator: SchemaValidator
    let node: CloudNode
    /// The HTTP port (the WebSocket M2M API is on it too).
    let httpPort: Int
    /// The device gateway's MQTT port, when the harness runs one.
    let mqttPort: Int?
    /// Its MQTT over TLS port, when the gateway has a TLS listener.
    let mqttTLSPort: Int?

    /// Policies that keep tests fast: cheapest bcrypt, no login delays.
    static var testPolicy: AccountPolicy {
        var policy = AccountPolicy()
        policy.bcryptCost = 4
        policy.delayPerFailure = 0
        return policy
    }

    /// A gateway for tests: any port, Alink's keep-alive floor lowered so that expiry takes
    /// seconds, short answer timeouts.
    static var testGateway: GatewayConfiguration {
        var gateway = GatewayConfiguration()
        gateway.mqttPort = 0
        gateway.keepAliveRange = 1...1200
        gateway.answerTimeoutSeconds = 3
        // The whole suite runs at once on two cores: admission may wait on a starved database.
        gateway.connectTimeout = .seconds(60)
        return gateway
    }

    static func run<Result: Sendable>(
        _ engine: TestEngine,
        policy: AccountPolicy = testPolicy,
        gateway: GatewayConfiguration? = nil,
        clock: (any WallClock)? = nil,
        configure: @Sendable (inout CloudConfiguration) -> Void = { _ in },
        _ body: @Sendable (CloudHarness) async throws -> Result
    ) async throws -> Result {
        try await engine.withDatabase { database in
            try await serve(database: database, policy: policy, gateway: gateway, clock: clock, configure: configure, body)
        }
    }

    static func serve<Result: Sendable>(
        database: any SQLDatabase,
        policy: AccountPolicy = testPolicy,
        gateway: GatewayConfiguration? = nil,
        bus: (any ClusterBus)? = nil,
        app existingApp: Administration.CreatedApp? = nil,
        clock: (any WallClock)? = nil,
        configure: @Sendable (inout CloudConfiguration) -> Void = { _ in },
        _ body: @Sendable (CloudHarness) async throws -> Result
    ) async throws -> Result {
        let admin = Administration(database: database)
        let app = if let existingApp { existingApp } else { try await admin.createApp(name: "test app") }
        var configuration = CloudConfiguration()
        configuration.httpPort = 0
        configuration.accounts = policy
        configuration.gateway = gateway
        configure(&configuration)
        let node = CloudNode(
            configuration: configuration, database: database, bus: bus, clock: clock ?? SystemWallClock(), logger: TestEngine.logger)
        let application = node.makeApplication()
        return try await application.test(.live) { client in
            let document = try await client.execute(uri: "/openapi.json", method: .get)
            let validator = SchemaValidator(document: try JSONValue.parse(String(buffer: document.body)))
            let gatewayAddresses = try await node.gateway?.addresses() ?? []
            return try await body(CloudHarness(
                database: database, admin: admin, app: app, client: client, validator: validator, node: node,
                httpPort: client.port ?? 0, mqttPort: gatewayAddresses.first?.port,
                mqttTLSPort: gateway?.tls == nil ? nil : gatewayAddresses.dropFirst().first?.port
            ))
        }
    }

    // MARK: Requests

    func call(
        _ method: HTTPRequest.Method,
        _ uri: String,
        token: String? = nil,
        appID: String? = nil,
        headers extra: HTTPFields = [:],
        json: JSONValue? = nil
    ) async throws -> APIResponse {
        var headers = extra
        headers[HTTPField.Name("X-Gizwits-Application-Id")!] = appID ?? app.appID
        if let token { headers[HTTPField.Name("X-Gizwits-User-token")!] = token }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: uri, method: method, headers: headers,
            body: json.map { ByteBuffer(string: $0.serialized()) }
        )
        let answer = APIResponse(status: response.status, headers: response.headers, text: String(buffer: response.body))
        validate(answer, method: method, uri: uri)
        return answer
    }

    /// Records an issue when an answer is not what the OpenAPI document says.
    func validate(_ answer: APIResponse, method: HTTPRequest.Method, uri: String) {
        let (schema, documented) = validator.responseSchema(method: method.rawValue, path: uri, status: Int(answer.status.code))
        guard documented else {
            if answer.errorCode != 9999 { Issue.record("\(method) \(uri) is served but not documented") }
            return
        }
        guard let schema else { return }
        guard let json = answer.json else {
            Issue.record("\(method) \(uri) answered \(answer.status.code) with a body that is not JSON: \(answer.text)")
            return
        }
        for problem in validator.problems(json, against: schema) {
            Issue.record("\(method) \(uri) → \(answer.status.code) breaks the OpenAPI document: \(problem)")
        }
    }

    /// Registers `username` with a valid password and returns the session.
    func register(_ username: String, password: String = "Passw0rd!") async throws -> UserSession {
        let response = try await call(.post, "/app/users", json: ["username": .string(username), "password": .string(password)])
        #expect(response.status == .created, "\(response.text)")
        return try response.session()
    }

    /// The newest outbox message to `recipient`.
    func lastMessage(to recipient: String) async throws -> OutgoingMessage? {
        try await OutboxSender.entries(in: database).first { $0.message.recipient == recipient }?.message
    }
}

struct APIResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var text: String

    var json: JSONValue? { try? JSONValue.parse(text) }

    subscript(key: String) -> JSONValue? { json?[key] }

    /// The Open API error code, if the answer is an error.
    var errorCode: Int64? {
        if case .int(let code)? = self["error_code"] { return code }
        return nil
    }

    func session() throws -> UserSession {
        guard let uid = self["uid"]?.stringValue, let token = self["token"]?.stringValue,
              case .int(let expireAt)? = self["expire_at"]
        else {
            throw TestFailure("expected {uid, token, expire_at}, got \(status.code) \(text)")
        }
        return UserSession(uid: uid, token: token, expireAt: expireAt)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

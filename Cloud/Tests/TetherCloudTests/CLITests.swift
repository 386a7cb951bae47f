import Foundation
import Testing
import TetherCore
@testable import TetherCloud

/// `tether-cloud admin` as a process, with `--json`.
@Suite("tether-cloud admin")
struct CLITests {
    static let executable = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/debug/tether-cloud")

    /// Runs the executable on a thread of its own: Foundation's `waitUntilExit` can hang on the
    /// cooperative pool.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(arguments) })
            }.start()
        }
    }

    private static func runBlocking(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
    }

    @Test("app, product, device and outbox commands print one JSON value each", arguments: TestEngine.allCases)
    func adminCommands(engine: TestEngine) async throws {
        try await engine.withFreshDatabase { url in
            let database = switch url {
            case .sqlite(let path, _): "sqlite:\(path)"
            case .postgres(let host, let port, let username, _, let name, _): "postgres://\(username)@\(host):\(port)/\(name)"
            }
            let app = try JSONValue.parse(try await Self.run(["admin", "app", "create", "--name", "CLI app", "--database", database, "--json"]).output)
            #expect(app["appId"]?.stringValue?.count == 32)
            #expect(app["appSecret"]?.stringValue?.count == 32)

            let appID = try #require(app["appId"]?.stringValue)
            let configured = try await Self.run(["admin", "app", "configure", "--app", appID, "--jwks-url", "https://id.example/jwks.json", "--jwt-audience", "x", "--database", database])
            #expect(configured.status == 0, "\(configured.error)")
            let reader = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let row = try await reader.first("SELECT jwks_url, jwt_audience FROM apps")
            await reader.close()
            let stored = try #require(row)
            #expect(stored.optionalText("jwks_url") == "https://id.example/jwks.json")
            #expect(stored.optionalText("jwt_audience") == "x")
            #expect(try await Self.run(["admin", "app", "configure", "--app", appID, "--jwks-url", "ftp://x", "--database", database]).status != 0)
            #expect(try await Self.run(["admin", "app", "configure", "--app", "nope", "--disable-third-party", "--database", database]).status != 0)

            let product = try JSONValue.parse(try await Self.run([
                "admin", "product", "create", "--name", "Pet house", "--datapoints", DeviceFixtures.petHouseURL.path, "--database", database, "--json",
            ]).output)
            let productKey = try #require(product["productKey"]?.stringValue)
            #expect(product["productSecret"]?.stringValue?.count == 32)

            let tsl = DeviceFixtures.petHouseURL.deletingLastPathComponent().appendingPathComponent("lamp-tsl.json").path
            let lamp = try await Self.run(["admin", "product", "create", "--name", "Lamp", "--tsl", tsl, "--database", database, "--json"])
            #expect(lamp.status == 0, "\(lamp.error)")

            let list = try JSONValue.parse(try await Self.run(["admin", "product", "list", "--database", database, "--json"]).output)
            #expect(list.arrayValue?.compactMap { $0["name"]?.stringValue } == ["Lamp", "Pet house"])

            let device = try JSONValue.parse(try await Self.run([
                "admin", "device", "create", "--product", productKey, "--name", "kitchen", "--mac", "00:11:22:33:44:55", "--database", database, "--json",
            ]).output)
            #expect(device["did"]?.stringValue?.count == 22)
            #expect(device["productKey"] == .string(productKey))
            #expect(device["deviceName"] == "kitchen")
            #expect(device["deviceSecret"]?.stringValue?.count == 32)

            let duplicate = try await Self.run(["admin", "device", "create", "--product", productKey, "--name", "kitchen", "--database", database, "--json"])
            #expect(duplicate.status != 0)
            let unknownProduct = try await Self.run(["admin", "device", "create", "--product", "nope", "--name", "x", "--database", database])
            #expect(unknownProduct.status != 0)
            #expect(unknownProduct.error.contains("product_key invalid"))

            let badModel = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).json")
            try Data(#"{"entities": [{"attrs": [{"name": "x", "data_type": "uint8"}]}]}"#.utf8).write(to: badModel)
            defer { try? FileManager.default.removeItem(at: badModel) }
            let refused = try await Self.run(["admin", "product", "create", "--name", "Bad", "--datapoints", badModel.path, "--database", database])
            #expect(refused.status != 0)
            #expect(!refused.error.isEmpty)

            let outbox = try JSONValue.parse(try await Self.run(["admin", "outbox", "--database", database, "--json"]).output)
            #expect(outbox == .array([]))
        }
    }
}

import Foundation
import Testing
import TetherAlink
import TetherCloudProtocol
import TetherCore
@testable import TetherCloud

/// Registering a fleet: numbered names and CSV imports, all or none, on both engines; the CLI's
/// JSON lines; an imported secret that signs the device in.
@Suite("Bulk device registration", .timeLimit(.minutes(2)))
struct BulkDeviceTests {
    static func count(_ cloud: CloudHarness, _ productKey: String) async throws -> Int64 {
        try await cloud.database.first("SELECT COUNT(*) AS n FROM devices WHERE product_key = $1", .text(productKey))?.int("n") ?? -1
    }

    @Test(
        "1,201 numbered devices in one go (across statements), each its own did and secret; a batch that fails leaves nothing", arguments: TestEngine.allCases)
    func numberedAndAllOrNothing(engine: TestEngine) async throws {
        try await CloudHarness.run(engine) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let created = try await cloud.admin.createDevices(DeviceImport.numbered(productKey: product.productKey, count: 1201, prefix: "lamp-"))
            #expect(created.count == 1201)
            #expect(created.first?.deviceName == "lamp-0001" && created.last?.deviceName == "lamp-1201")
            #expect(Set(created.map(\.did)).count == 1201 && Set(created.map(\.deviceSecret)).count == 1201)
            #expect(try await Self.count(cloud, product.productKey) == 1201)
            let stored = try #require(try await DeviceStore(cloud.database).credentials(did: created[700].did))
            #expect(stored.deviceName == "lamp-0701" && stored.deviceSecret == created[700].deviceSecret && stored.passcode == created[700].passcode)

            // One name the product already has: refused by name, and none of the others stored.
            var clash = DeviceImport.numbered(productKey: product.productKey, count: 600, prefix: "spare-")
            clash[599].name = "lamp-0042"
            let refused = await #expect(throws: CloudAPIError.self) { try await cloud.admin.createDevices(clash) }
            #expect(refused?.code == CloudError.macAlreadyRegistered.code && refused?.detail.contains("lamp-0042") == true)
            #expect(try await Self.count(cloud, product.productKey) == 1201)

            // Checked before anything is written: a name twice, a bad MAC, a bad secret, an unknown product.
            let twice = [DeviceEntry(productKey: product.productKey, name: "a"), DeviceEntry(productKey: product.productKey, name: "a")]
            let doubled = await #expect(throws: CloudAPIError.self) { try await cloud.admin.createDevices(twice) }
            #expect(doubled?.code == 9015 && doubled?.detail.contains("device 2") == true)
            let badMAC = [DeviceEntry(productKey: product.productKey, name: "b"), DeviceEntry(productKey: product.productKey, name: "c", mac: "zz")]
            #expect(await (#expect(throws: CloudAPIError.self) { try await cloud.admin.createDevices(badMAC) })?.code == 9015)
            let badSecret = [DeviceEntry(productKey: product.productKey, name: "d", secret: "short")]
            #expect(await (#expect(throws: CloudAPIError.self) { try await cloud.admin.createDevices(badSecret) })?.code == 9015)
            let unknown = [DeviceEntry(productKey: product.productKey, name: "e"), DeviceEntry(productKey: "nope", name: "f")]
            #expect(await (#expect(throws: CloudAPIError.self) { try await cloud.admin.createDevices(unknown) })?.code == 9002)
            #expect(try await Self.count(cloud, product.productKey) == 1201)
        }
    }

    @Test("a CSV import keeps the fleet's MACs and secrets: an imported device signs in to the gateway with its own")
    func importedSecretSignsIn() async throws {
        try await CloudHarness.run(.sqlite, gateway: CloudHarness.testGateway) { cloud in
            let product = try await GatewayFixtures.lampProduct(cloud)
            let csv = """
                productKey,deviceName,mac,deviceSecret
                # flashed at the factory
                \(product.productKey),fleet-1,02:00:00:00:00:01,Secret0123456789abcdefSECRET01\r
                \(product.productKey),fleet-2,,

                \(product.productKey),fleet-3,020000000003
                """
            let entries = try DeviceImport.parseCSV(csv)
            #expect(entries.map(\.name) == ["fleet-1", "fleet-2", "fleet-3"])
            #expect(entries.map(\.secret) == ["Secret0123456789abcdefSECRET01", nil, nil] && entries.map(\.mac) == ["02:00:00:00:00:01", nil, "020000000003"])
            let created = try await cloud.admin.createDevices(entries)
            #expect(created[0].deviceSecret == "Secret0123456789abcdefSECRET01" && created[0].mac == "020000000001" && created[2].mac == "020000000003")
            let connected = try await GatewayFixtures.withDevice(cloud, created[0]) { client in try await client.postProperties(["LightSwitch": true]) }
            #expect(connected.isSuccess)
            // The same MAC again, under another name: refused whole.
            let again = try DeviceImport.parseCSV("\(product.productKey),fleet-4,02-00-00-00-00-01\n\(product.productKey),fleet-5,")
            let refused = await #expect(throws: CloudAPIError.self) { try await cloud.admin.createDevices(again) }
            #expect(refused?.detail.contains("020000000001") == true)
            #expect(try await Self.count(cloud, product.productKey) == 3)
        }
    }

    @Test(
        "CSV rows that are not of the shape are refused with their line",
        arguments: [
            ("pk,name", 1), ("pk,a,,s\npk,b", 2), ("productKey,deviceName,mac\n\n,name,", 3), ("pk,a,b,c,d", 1),
        ])
    func malformedCSV(text: String, line: Int) {
        let error = #expect(throws: TetherError.self) { try DeviceImport.parseCSV(text) }
        #expect(error?.message.hasPrefix("line \(line):") == true, "\(String(describing: error))")
    }

    @Test("the CLI: --count and import print one JSON object per device, which the agent's --credentials reads", arguments: TestEngine.allCases)
    func cli(engine: TestEngine) async throws {
        try await engine.withFreshDatabase { url in
            let database =
                switch url {
                case .sqlite(let path, _): "sqlite:\(path)"
                case .postgres(let host, let port, let username, _, let name, _): "postgres://\(username)@\(host):\(port)/\(name)"
                }
            let product = try JSONValue.parse(
                try await CLITests.run([
                    "admin", "product", "create", "--name", "Pet house", "--datapoints", DeviceFixtures.petHouseURL.path, "--database", database, "--json",
                ]).output)
            let productKey = try #require(product["productKey"]?.stringValue)
            let made = try await CLITests.run([
                "admin", "device", "create", "--product", productKey, "--count", "25", "--name-prefix", "pet-", "--database", database, "--json",
            ])
            #expect(made.status == 0, "\(made.error)")
            let lines = made.output.split(separator: "\n").map { try? JSONValue.parse(String($0)) }
            #expect(lines.count == 25 && lines.allSatisfy { $0?["deviceSecret"]?.stringValue?.count == 32 })
            #expect(lines.first??["deviceName"] == "pet-01" && lines.last??["deviceName"] == "pet-25")
            let csv = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString).csv")
            try Data("\(productKey),imported-1,02:00:00:00:00:09\n\(productKey),pet-07,\n".utf8).write(to: csv)
            defer { try? FileManager.default.removeItem(at: csv) }
            let clash = try await CLITests.run(["admin", "device", "import", "--csv", csv.path, "--database", database, "--json"])
            #expect(clash.status != 0 && clash.error.contains("pet-07") && clash.output.isEmpty)
            try Data("\(productKey),imported-1,02:00:00:00:00:09\n".utf8).write(to: csv)
            let imported = try await CLITests.run(["admin", "device", "import", "--csv", csv.path, "--database", database, "--json"])
            #expect(try JSONValue.parse(imported.output)["mac"] == "020000000009", "\(imported.error)")
            #expect(try await CLITests.run(["admin", "device", "create", "--product", productKey, "--count", "3", "--database", database]).status != 0)
        }
    }
}

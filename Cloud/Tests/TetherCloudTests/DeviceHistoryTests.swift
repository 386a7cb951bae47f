import Testing
import TetherCore
@testable import TetherCloud

@Suite("Device history storage")
struct DeviceHistoryTests {
    @Test("a batch of reports merges in order per device, logs each report, and spans several statements", arguments: TestEngine.allCases)
    func batch(engine: TestEngine) async throws {
        try await engine.withDatabase { database in
            let admin = Administration(database: database)
            let product = try await admin.createProduct(name: "p", modelFile: try DeviceFixtures.petHouse(), format: .gizwits)
            var dids: [String] = []
            for index in 0..<30 {
                dids.append(try await admin.createDevice(productKey: product.productKey, name: "d\(index)", mac: nil).did)
            }
            let history = DeviceHistory(database: database)
            var reports: [(did: String, attrs: JSONObject)] = [(dids[0], ["a": 1]), (dids[1], ["b": 2]), (dids[0], ["a": 3, "c": 4])]
            reports += dids.dropFirst(2).map { ($0, ["n": 5]) }
            // Eight rows a statement: every kind of statement spans several.
            let statuses = try await history.storeReports(reports, atMs: 1_000, rowsPerStatement: 8)
            #expect(statuses[dids[0]] == ["a": 3, "c": 4])
            #expect(statuses[dids[1]] == ["b": 2])
            #expect(statuses.count == 30)
            let stored = try await history.status(did: dids[0])
            #expect(stored?.attrs == ["a": 3, "c": 4])
            #expect(stored?.updatedMs == 1_000)
            let again = try await history.storeReports([(dids[0], ["d": 6])], atMs: 2_000)
            #expect(again[dids[0]] == ["a": 3, "c": 4, "d": 6])
            let logged = try await database.first("SELECT COUNT(*) AS n FROM device_log")?.int("n")
            #expect(logged == Int64(reports.count + 1))
        }
    }
}

import Foundation
import HTTPTypes
import Tether
import TetherCore
@testable import TetherCloud

/// What the automation tests (groups, scenes, rules, schedules) share.
enum AutomationFixtures {
    /// A lamp of a new product, and an SDK client logged in as a new user bound to it (the cloud
    /// alone, no LAN).
    static func withSDKUser(
        _ cloud: CloudHarness, _ body: (TetherClient, Administration.CreatedProduct, Administration.CreatedDevice) async throws -> Void
    ) async throws {
        let product = try await GatewayFixtures.lampProduct(cloud)
        let lamp = try await GatewayFixtures.device(cloud, product: product)
        let name = "sdk\(UInt32.random(in: 0...UInt32.max))"
        _ = try await GatewayFixtures.user(cloud, boundTo: [lamp], name: name)
        try await withTetherClient(configuration: try SharingMessageTests.cloudOnlyConfiguration(cloud), logger: GatewayFixtures.quietLogger) { client in
            _ = try await client.account!.login(username: name, password: "Passw0rd!")
            try await body(client, product, lamp)
        }
    }

    /// Waits until the cloud shows every device online to `user`.
    static func waitOnline(_ cloud: CloudHarness, _ user: UserSession, _ devices: [Administration.CreatedDevice]) async throws {
        try await GatewayFixtures.waitUntil("\(devices.count) devices are online") {
            for device in devices where try await cloud.call(.get, "/app/devices/\(device.did)", token: user.token)["is_online"] != true {
                return false
            }
            return true
        }
    }

    /// Two connections to one fresh PostgreSQL database, as two nodes have; closed after `body`.
    static func withTwoNodes(_ body: (any SQLDatabase, any SQLDatabase) async throws -> Void) async throws {
        try await TestEngine.postgres.withFreshDatabase { url in
            let databaseA = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let databaseB = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            do {
                try await body(databaseA, databaseB)
            } catch {
                await databaseA.close()
                await databaseB.close()
                throw error
            }
            await databaseA.close()
            await databaseB.close()
        }
    }

    /// Hand-fired automations, in batches of 7 (so that a test crosses batch boundaries).
    static let smallBatches: @Sendable (inout CloudConfiguration) -> Void = {
        $0.scheduler.interval = .seconds(3600)
        $0.scheduler.batchSize = 7
    }
}

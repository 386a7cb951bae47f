import Foundation
import HTTPTypes
import Testing
import TetherCore
@testable import TetherCloud

@Suite("Restart persistence")
struct PersistenceTests {
    @Test("users, tokens, devices and bindings survive a restart of the server", arguments: TestEngine.allCases)
    func restart(engine: TestEngine) async throws {
        try await engine.withFreshDatabase { url in
            let first = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            let (app, session, did) = try await CloudHarness.serve(database: first) { cloud in
                let session = try await cloud.register("persistent")
                let device = try await DeviceFixtures.registeredDevice(cloud)
                #expect(try await DeviceFixtures.bind(cloud, device, token: session.token)["success"] == [.string(device.did)])
                return (cloud.app, session, device.did)
            }
            await first.close()

            let second = try await url.open(logger: TestEngine.logger, maximumConnections: TestEngine.poolSize)
            try await CloudHarness.serve(database: second, app: app) { cloud in
                // The token issued before the restart still works…
                let devices = try await cloud.call(.get, "/app/bindings", token: session.token)
                #expect(devices["devices"]?.arrayValue?.compactMap { $0["did"]?.stringValue } == [did])
                // …and so does the password.
                let login = try await cloud.call(.post, "/app/login", json: ["username": "persistent", "password": "Passw0rd!"])
                #expect(try login.session().uid == session.uid)
            }
            await second.close()
        }
    }
}

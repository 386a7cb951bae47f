import Foundation
import Testing
import Tether
@testable import TetherCloud

/// `TetherClient`'s account against a live cloud: the session kept across launches, renewed
/// before it expires, and reported once when it is over.
@Suite("SDK account and session", .timeLimit(.minutes(1)))
struct SDKAccountTests {
    static func configuration(_ cloud: CloudHarness, store: any SessionStore, renewBefore: Duration = .seconds(3600)) throws -> TetherClient.Configuration {
        TetherClient.Configuration(
            lan: LANConfiguration(discoveryEnabled: false),
            cloud: .init(endpoint: try CloudEndpoint(url: "http://127.0.0.1:\(cloud.httpPort)"), appID: cloud.app.appID, sessionStore: store, renewBefore: renewBefore, requestTimeout: .seconds(20))
        )
    }

    /// The first account event, or nil after `timeout`.
    static func firstEvent(_ events: AsyncStream<AccountEvent>, timeout: Duration = .seconds(5)) async -> AccountEvent? {
        await withTaskGroup(of: AccountEvent?.self) { group in
            group.addTask { for await event in events { return event }; return nil }
            group.addTask { try? await Task.sleep(for: timeout); return nil }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }

    @Test("the session outlives the client in a file only its owner can read")
    func persistence() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-session-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = FileSessionStore(path: directory.appendingPathComponent("session.json").path)
            let uid = try await withTetherClient(configuration: Self.configuration(cloud, store: store)) { client in
                let account = try #require(client.account)
                #expect(!account.isLoggedIn)
                let events = account.events()
                let session = try await account.register(username: "persisted", password: "Passw0rd!")
                #expect(await Self.firstEvent(events) == .loggedIn(uid: session.uid))
                return session.uid
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            try await withTetherClient(configuration: Self.configuration(cloud, store: store)) { client in
                let account = try #require(client.account)
                #expect(account.session?.uid == uid)
                #expect(try await account.userInfo().username == "persisted")
                account.logout()
                #expect(!account.isLoggedIn)
                let error = await #expect(throws: TetherError.self) { try await account.userInfo() }
                #expect(error?.code == .notLoggedIn)
            }
            #expect(!FileManager.default.fileExists(atPath: store.path))
        }
    }

    @Test("a session near its expiry is renewed without the password")
    func renewal() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            // Tokens last 7 days; renewing when less than 30 days are left means now.
            try await withTetherClient(configuration: Self.configuration(cloud, store: MemorySessionStore(), renewBefore: .seconds(30 * 24 * 3600))) { client in
                let account = try #require(client.account)
                let first = try await account.register(username: "renewed", password: "Passw0rd!")
                let events = account.events()
                #expect(try await account.userInfo().uid == first.uid)
                #expect(await Self.firstEvent(events) == .sessionRenewed)
                #expect(account.session?.token != first.token)
                #expect(account.session?.uid == first.uid)
            }
        }
    }

    @Test("a session revoked elsewhere, or expired, is reported once and the user must log in again")
    func expiry() async throws {
        try await CloudHarness.run(.sqlite) { cloud in
            try await withTetherClient(configuration: Self.configuration(cloud, store: MemorySessionStore())) { phone in
                try await withTetherClient(configuration: Self.configuration(cloud, store: MemorySessionStore())) { tablet in
                    _ = try await phone.account!.register(username: "twodevices", password: "Passw0rd!")
                    _ = try await tablet.account!.login(username: "twodevices", password: "Passw0rd!")
                    // Subscribed first: the tablet's background binding refresh may be the
                    // first to find the session revoked.
                    let events = tablet.account!.events()
                    try await phone.account!.changePassword(old: "Passw0rd!", new: "N3w!Passw0rd")
                    #expect(try await phone.account!.userInfo().username == "twodevices")
                    let revoked = await #expect(throws: TetherError.self) { try await tablet.account!.userInfo() }
                    #expect(revoked?.code == .notLoggedIn)
                    #expect(await Self.firstEvent(events) == .sessionExpired)
                    #expect(!tablet.account!.isLoggedIn)
                    // Once: a second failure does not report it again.
                    _ = try? await tablet.account!.userInfo()
                    #expect(await Self.firstEvent(events, timeout: .milliseconds(300)) == nil)
                }
            }
        }
    }
}

import Crypto
import Foundation
import NIOCore
import Synchronization
import Testing
import TetherCore
import TetherGizwitsLAN
import TetherTestSupport

@testable import TetherAgent

/// The device side of LAN grants, as a value (no sockets): which logins an activated device
/// takes, every refusal with its result byte, and sessions that last no longer than their grant.
@Suite("Agent: LAN logins with grants")
struct LANGrantLoginTests {
    /// A pet house whose clock the test moves, trusting RFC 8032's test key once activated.
    /// Unix seconds the test moves.
    final class MovableClock: Sendable {
        private let seconds = Atomic<Int64>(1_700_000_000)
        var now: Int64 { seconds.load(ordering: .relaxed) }
        func add(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
    }

    final class Bench: Sendable {
        let clock = MovableClock()
        let device: VirtualDevice
        let key = FuzzTargets.grantSigningKey

        init(activated: Bool = true, bindable: Bool = false, passcodeLogins: LANGrantTrust.PasscodeLogins = .untilActivated) throws {
            let clock = self.clock
            let trust = LANGrantTrust(passcodeLogins: passcodeLogins, now: { clock.now })
            if activated { trust.trust(LANGrantKey(FuzzTargets.grantSigningKey.publicKey)) }
            let identity = DeviceIdentity(did: "gKufzxZwYeyd3Skbsb6mza", mac: [2, 0, 0, 0, 0, 1], passcode: "ABCDEFGHIJ", productKey: "pk")
            device = try VirtualDevice(model: Fixtures.petHouse(), identity: identity, bindable: bindable, lanGrants: trust)
        }

        func grant(did: String = "gKufzxZwYeyd3Skbsb6mza", rights: LANGrant.Rights = [.read, .control], lifetime: Int64 = 3600, key: Curve25519.Signing.PrivateKey? = nil)
            throws -> String
        {
            let now = clock.now
            let signer = key ?? self.key
            return try LANGrant(keyID: LANGrantKey(self.key.publicKey).keyID, did: did, uid: "u1", rights: rights, issuedAt: now, expiresAt: now + lifetime)
                .signed(with: signer)
        }

        func send(_ message: GizwitsLANMessage, on session: inout DeviceSessionStateMachine) -> [DeviceSessionStateMachine.Action] {
            session.receive(message, device: device, hotspots: [], hardwareInfo: GizwitsHardwareInfo(
                wifiHardwareVersion: "", wifiSoftwareVersion: "", mcuHardwareVersion: "", mcuSoftwareVersion: "", p0Version: "", wifiFirmwareVersion: "", productKey: "pk"))
        }

        func control(on session: inout DeviceSessionStateMachine) throws -> Bool {
            let before = device.status.allValues["LED_OnOff"]
            let p0 = try device.codec.encode(.control(["LED_OnOff": .bool(before != .bool(true))]))
            _ = send(.p0WithAck(sn: 1, p0: p0), on: &session)
            return device.status.allValues["LED_OnOff"] != before
        }
    }

    static func refusal(_ actions: [DeviceSessionStateMachine.Action]) -> GizwitsLoginResult? {
        guard actions.count == 2, case .send(.loginResult(let result)) = actions[0], case .close = actions[1] else { return nil }
        return result
    }

    @Test("before activation the passcode logs in, as GAgent; a grant is read as a wrong passcode (01), so apps fall back")
    func notActivated() throws {
        let bench = try Bench(activated: false)
        var session = DeviceSessionStateMachine(client: "app")
        #expect(bench.send(.login(passcode: "ABCDEFGHIJ"), on: &session) == [.send(.loginResult(.success))])
        var other = DeviceSessionStateMachine(client: "app2")
        #expect(Self.refusal(bench.send(.login(passcode: try bench.grant()), on: &other)) == .refused)
    }

    @Test("activated: the passcode alone is refused (04) outside the binding window, taken inside it or with --lan-passcode always")
    func passcodeAfterActivation() throws {
        var session = DeviceSessionStateMachine(client: "app")
        let bench = try Bench()
        #expect(Self.refusal(bench.send(.login(passcode: "ABCDEFGHIJ"), on: &session)) == .grantRequired)
        #expect(!session.loggedIn)
        #expect(Self.refusal(bench.send(.login(passcode: "WRONGWRONG"), on: &session)) == .refused, "a wrong passcode is still just wrong")
        var inWindow = DeviceSessionStateMachine(client: "app")
        #expect(try Bench(bindable: true).send(.login(passcode: "ABCDEFGHIJ"), on: &inWindow) == [.send(.loginResult(.success))])
        var legacy = DeviceSessionStateMachine(client: "app")
        #expect(try Bench(passcodeLogins: .always).send(.login(passcode: "ABCDEFGHIJ"), on: &legacy) == [.send(.loginResult(.success))])
    }

    @Test("a valid grant logs in and controls; forged, another device's and expired ones are refused with 03, 03 and 02")
    func grants() throws {
        let bench = try Bench()
        var session = DeviceSessionStateMachine(client: "app")
        #expect(bench.send(.login(passcode: try bench.grant()), on: &session) == [.send(.loginResult(.success))])
        #expect(session.grantExpiry == 1_700_003_600)
        #expect(try bench.control(on: &session))

        var forged = DeviceSessionStateMachine(client: "mallory")
        #expect(Self.refusal(bench.send(.login(passcode: try bench.grant(key: Curve25519.Signing.PrivateKey())), on: &forged)) == .grantInvalid)
        var foreign = DeviceSessionStateMachine(client: "mallory")
        #expect(Self.refusal(bench.send(.login(passcode: try bench.grant(did: "AAAAAAAAAAAAAAAAAAAAAA")), on: &foreign)) == .grantInvalid)
        let old = try bench.grant(lifetime: 60)
        bench.clock.add(61)
        var expired = DeviceSessionStateMachine(client: "mallory")
        #expect(Self.refusal(bench.send(.login(passcode: old), on: &expired)) == .grantExpired)
        #expect(!forged.loggedIn && !foreign.loggedIn && !expired.loggedIn)
    }

    @Test("a session ends when its grant lapses (02, closed), unless a new grant came on the same connection first")
    func sessionsLastAsLongAsTheirGrant() throws {
        let bench = try Bench()
        var renewed = DeviceSessionStateMachine(client: "owner")
        var lapsing = DeviceSessionStateMachine(client: "revoked")
        #expect(bench.send(.login(passcode: try bench.grant(lifetime: 100)), on: &renewed) == [.send(.loginResult(.success))])
        #expect(bench.send(.login(passcode: try bench.grant(lifetime: 100)), on: &lapsing) == [.send(.loginResult(.success))])
        bench.clock.add(80)
        #expect(bench.send(.login(passcode: try bench.grant(lifetime: 100)), on: &renewed) == [.send(.loginResult(.success))])
        #expect(bench.send(.heartbeat, on: &lapsing) == [.send(.heartbeatReply)])
        bench.clock.add(20)
        #expect(bench.send(.heartbeat, on: &lapsing) == [.send(.loginResult(.grantExpired)), .close(reason: "the grant expired")])
        #expect(bench.send(.heartbeat, on: &renewed) == [.send(.heartbeatReply)])
        #expect(try bench.control(on: &renewed))
        // A refused renewal ends the session that asked for it.
        #expect(Self.refusal(bench.send(.login(passcode: try bench.grant(did: "AAAAAAAAAAAAAAAAAAAAAA")), on: &renewed)) == .grantInvalid)
        #expect(!renewed.loggedIn)
    }

    @Test("a grant without the control right reads but does not write")
    func readOnlyGrant() throws {
        let bench = try Bench()
        var session = DeviceSessionStateMachine(client: "viewer")
        #expect(bench.send(.login(passcode: try bench.grant(rights: [.read])), on: &session) == [.send(.loginResult(.success))])
        #expect(try !bench.control(on: &session))
        let read = bench.send(.p0WithAck(sn: 2, p0: try bench.device.codec.encode(.read([]))), on: &session)
        #expect(read.count == 1)
    }

    @Test("keys survive a restart in the key file; the cloud's list replaces the device's (a dropped key stops being trusted)")
    func keyFile() throws {
        let path = "/tmp/tether-lan-keys-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(path) }
        let first = LANGrantKey(FuzzTargets.grantSigningKey.publicKey)
        let trust = LANGrantTrust(keyFile: path)
        #expect(!trust.isActivated)
        trust.trust(first)
        let restarted = LANGrantTrust(keyFile: path)
        #expect(restarted.isActivated && restarted.keys == [first], "a restarted device still checks grants")
        let rotated = LANGrantKey(Curve25519.Signing.PrivateKey().publicKey)
        restarted.replace(with: [rotated])
        #expect(restarted.keys == [rotated])
        #expect(LANGrantTrust(keyFile: path).keys == [rotated])
        restarted.replace(with: [])
        #expect(restarted.isActivated, "an empty list does not deactivate the device")
    }

    @Test("keys: kept once each, the newest four")
    func keys() {
        let trust = LANGrantTrust()
        let first = LANGrantKey(FuzzTargets.grantSigningKey.publicKey)
        trust.trust(first)
        trust.trust(first)
        #expect(trust.keys == [first])
        for _ in 0..<4 { trust.trust(LANGrantKey(Curve25519.Signing.PrivateKey().publicKey)) }
        #expect(trust.keys.count == 4 && !trust.keys.contains(first))
    }
}

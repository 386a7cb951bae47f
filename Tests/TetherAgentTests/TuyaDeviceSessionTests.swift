import Testing
import TetherCore
import TetherTestSupport
import TetherTuyaLAN

@testable import TetherAgent

/// The agent's Tuya session as a value: negotiation first on 3.4/3.5, then reads, writes and
/// heartbeats answered with what the device holds, by DP id.
@Suite("Agent: Tuya sessions")
struct TuyaDeviceSessionTests {
    static let key = Array("thisisarealkey00".utf8)

    static func device() throws -> VirtualDevice {
        let identity = DeviceIdentity(did: "gKufzxZwYeyd3Skbsb6mza", mac: [2, 0, 0, 0, 0, 1], passcode: "ABCDEFGHIJ", productKey: "pk")
        return try VirtualDevice(model: Fixtures.petHouse(), identity: identity)
    }

    @Test("3.5: nothing but the negotiation before it; then both sides hold the same session key")
    func negotiation() throws {
        let device = try Self.device()
        var session = try TuyaDeviceSession(version: .v35, deviceID: "eb01", localKey: Self.key, points: TuyaDataPointMap(model: device.model))
        let early = session.receive(TuyaMessage(sequence: 1, command: .queryNew, payload: Array("{}".utf8)), device: device, client: "app")
        #expect(early.count == 1 && { if case .close = early[0] { true } else { false } }())
        var fresh = try TuyaDeviceSession(version: .v35, deviceID: "eb01", localKey: Self.key, points: TuyaDataPointMap(model: device.model))
        let app = try TuyaHandshake.App(version: .v35, localKey: Self.key)
        guard case .send(let response) = try #require(fresh.receive(app.start(sequence: 1), device: device, client: "app").first) else {
            Issue.record("no SESS_KEY_NEG_RESP")
            return
        }
        let (finish, appKey) = try app.finish(after: response, sequence: 2)
        #expect(fresh.receive(finish, device: device, client: "app") == [.useKey(appKey)])
        #expect(fresh.isReady)
    }

    @Test("3.3: a read answers every point by id; a write applies, answers the points set; a heartbeat echoes; garbage gets the refusal text")
    func dataPlane() throws {
        let device = try Self.device()
        var session = try TuyaDeviceSession(version: .v33, deviceID: "eb01", localKey: Self.key, points: TuyaDataPointMap(model: device.model))
        guard case .send(let read)? = session.receive(TuyaMessage(sequence: 4, command: .query, payload: Array("{}".utf8)), device: device, client: "app").first
        else {
            Issue.record("no answer to the read")
            return
        }
        #expect(read.sequence == 4 && read.returnCode == 0)
        #expect(try TuyaStatus(parsing: read.payload).dps["0"] == .bool(false))
        let (command, payload) = TuyaRequest.control(["0": true, "2": 100], deviceID: "eb01", version: .v33, time: 1)
        guard case .send(let written)? = session.receive(TuyaMessage(sequence: 5, command: command, payload: payload), device: device, client: "app").first
        else {
            Issue.record("no answer to the write")
            return
        }
        #expect(try TuyaStatus(parsing: written.payload).dps == ["0": true, "2": 100])
        #expect(device.status.allValues["LED_OnOff"] == .bool(true) && device.status.allValues["LED_R"] == .int(100))
        #expect(session.receive(TuyaMessage(sequence: 6, command: .heartbeat), device: device, client: "app") == [
            .send(TuyaMessage(sequence: 6, command: .heartbeat, returnCode: 0))
        ])
        let refused = session.receive(TuyaMessage(sequence: 7, command: .control, payload: Array("not json".utf8)), device: device, client: "app")
        #expect(refused.count == 1 && { if case .send(let message) = refused[0] { message.returnCode == 1 } else { false } }())
    }
}

extension TuyaDeviceSessionTests {
    @Test("a replayed frame (a sequence number already used on the connection) is refused and not applied")
    func replay() throws {
        let device = try Self.device()
        var session = try TuyaDeviceSession(version: .v33, deviceID: "eb01", localKey: Self.key, points: TuyaDataPointMap(model: device.model))
        let (command, on) = TuyaRequest.control(["0": true], deviceID: "eb01", version: .v33, time: 1)
        let (_, off) = TuyaRequest.control(["0": false], deviceID: "eb01", version: .v33, time: 2)
        _ = session.receive(TuyaMessage(sequence: 5, command: command, payload: on), device: device, client: "app")
        _ = session.receive(TuyaMessage(sequence: 6, command: command, payload: off), device: device, client: "app")
        #expect(device.status.allValues["LED_OnOff"] == .bool(false))
        let replayed = session.receive(TuyaMessage(sequence: 5, command: command, payload: on), device: device, client: "app")
        guard case .refuse(let error)? = replayed.first, replayed.count == 1 else {
            Issue.record("expected a refusal: \(replayed)")
            return
        }
        #expect(error.code == .replayedFrame)
        #expect(device.status.allValues["LED_OnOff"] == .bool(false))
        // The client's next frame goes through.
        #expect(session.receive(TuyaMessage(sequence: 7, command: .heartbeat), device: device, client: "app").count == 1)
    }
}

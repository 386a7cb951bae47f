import Testing
import TetherCore
@testable import TetherTuyaLAN

/// The app's connection logic without sockets: negotiation, one request on the wire at a time,
/// answers matched by command whatever their sequence number, pushes, deadlines and closes.
@Suite("Tuya client state machine")
struct TuyaClientStateMachineTests {
    typealias Machine = TuyaClientStateMachine
    static let key = Array("thisisarealkey00".utf8)

    static func writes(_ actions: [Machine.Action]) -> [TuyaMessage] {
        actions.compactMap { if case .write(let message) = $0 { message } else { nil } }
    }

    static func status(_ dps: JSONObject, command: TuyaCommand = .status, sequence: UInt32 = 77) -> TuyaMessage {
        TuyaMessage(sequence: sequence, command: command, returnCode: 0, payload: TuyaStatus(dps: dps).payload(deviceID: "d", version: .v33))
    }

    @Test("3.3: open at once; requests wait their turn; answers matched by command, not sequence")
    func requestsInTurn() {
        var machine = Machine(version: .v33, localKey: Self.key)
        #expect(machine.connected() == [.established])
        let first = machine.request(.init(id: 1, command: .query, payload: [1]))
        #expect(Self.writes(first).map(\.command) == [.query])
        #expect(machine.request(.init(id: 2, command: .control, payload: [2])).isEmpty)
        // A push while the read is on the wire is a report, not its answer.
        #expect(machine.received(Self.status(["1": true])) == [.report(TuyaStatus(dps: ["1": true], time: 0))])
        // The device's own sequence number (0 here) does not matter.
        let answer = Self.status(["1": false], command: .query, sequence: 0)
        let next = machine.received(answer)
        #expect(next.first == .answer(id: 1, answer))
        let written = Self.writes(next)
        #expect(written.map(\.command) == [.control])
        #expect(written.first?.sequence == 2)
    }

    @Test("3.5: negotiates first, holds requests until the key is set, then sends them")
    func negotiation() throws {
        var machine = Machine(version: .v35, localKey: Self.key)
        let start = Self.writes(machine.connected())
        #expect(start.map(\.command) == [.sessionKeyStart])
        #expect(machine.request(.init(id: 1, command: .queryNew, payload: [])).isEmpty)
        var device = try TuyaHandshake.Device(version: .v35, localKey: Self.key)
        let response = try device.respond(to: start[0], sequence: 9)
        let actions = machine.received(response)
        let finish = Self.writes(actions)
        #expect(finish.map(\.command) == [.sessionKeyFinish, .queryNew])
        let key = try device.complete(with: finish[0])
        #expect(actions.contains(.useKey(key)))
        #expect(actions.contains(.established))
        // useKey comes after FINISH (sealed with the local key) and before the request.
        let order = actions.map { action -> String in
            switch action {
            case .write(let message): "\(message.command)"
            case .useKey: "key"
            default: "other"
            }
        }
        #expect(order == ["SESS_KEY_NEG_FINISH", "key", "other", "DP_QUERY_NEW"])
    }

    @Test("a wrong local key fails the negotiation with its own code and closes")
    func wrongKey() throws {
        var machine = Machine(version: .v34, localKey: Self.key)
        let start = Self.writes(machine.connected())
        #expect(machine.request(.init(id: 1, command: .queryNew, payload: [])).isEmpty)
        var device = try TuyaHandshake.Device(version: .v34, localKey: Array("anotherlocalkey0".utf8))
        let actions = machine.received(try device.respond(to: start[0], sequence: 1))
        guard case .fail(1, let error)? = actions.first, case .close? = actions.last else {
            Issue.record("expected the request to fail and the connection to close: \(actions)")
            return
        }
        #expect(error.code == .sessionNegotiationFailed)
        #expect(machine.request(.init(id: 2, command: .queryNew, payload: [])).first.map { if case .fail(2, _) = $0 { true } else { false } } == true)
    }

    @Test("an unanswered request closes the connection; a cancelled one fails at once but keeps its place and deadline")
    func deadlines() {
        var machine = Machine(version: .v33, localKey: Self.key)
        _ = machine.connected()
        _ = machine.request(.init(id: 1, command: .query, payload: []))
        _ = machine.request(.init(id: 2, command: .query, payload: []))
        let cancelled = TetherError(.cancelled, "cancelled")
        // The queued one leaves the queue.
        #expect(machine.abandon(2, error: cancelled, connectionIsSuspect: false) == [.fail(id: 2, cancelled)])
        // The one on the wire fails for its caller, and stays until the device answers it.
        #expect(machine.abandon(1, error: cancelled, connectionIsSuspect: false) == [.abandoned(id: 1, cancelled)])
        #expect(machine.abandon(1, error: cancelled, connectionIsSuspect: false).isEmpty)
        _ = machine.request(.init(id: 3, command: .query, payload: []))
        let late = Self.status(["1": true], command: .query)
        let afterLate = machine.received(late)
        #expect(afterLate.first == .answer(id: 1, late), "its answer ends its deadline")
        #expect(Self.writes(afterLate).map(\.command) == [.query])
        let timeout = TetherError(.timeout, "no answer")
        #expect(machine.abandon(3, error: timeout, connectionIsSuspect: true) == [.fail(id: 3, timeout), .close(timeout)])
        #expect(!machine.isOpen)
    }

    @Test("a cancelled request the device never answers: its deadline still closes the connection")
    func abandonedThenSilent() {
        var machine = Machine(version: .v33, localKey: Self.key)
        _ = machine.connected()
        _ = machine.request(.init(id: 1, command: .query, payload: []))
        _ = machine.request(.init(id: 2, command: .control, payload: []))
        let cancelled = TetherError(.cancelled, "cancelled")
        #expect(machine.abandon(1, error: cancelled, connectionIsSuspect: false) == [.abandoned(id: 1, cancelled)])
        let timeout = TetherError(.timeout, "no answer")
        #expect(machine.abandon(1, error: timeout, connectionIsSuspect: true) == [.fail(id: 2, timeout), .close(timeout)])
    }

    @Test("heartbeats and empty acknowledgements are not reports; unreadable pushes are named, the connection goes on")
    func pushes() {
        var machine = Machine(version: .v33, localKey: Self.key)
        _ = machine.connected()
        #expect(machine.received(TuyaMessage(sequence: 1, command: .heartbeat, returnCode: 0)).isEmpty)
        #expect(machine.received(TuyaMessage(sequence: 1, command: .status, returnCode: 0)).isEmpty)
        let actions = machine.received(TuyaMessage(sequence: 1, command: .status, returnCode: 0, payload: Array("{not json".utf8)))
        guard case .unreadable? = actions.first else {
            Issue.record("expected .unreadable: \(actions)")
            return
        }
        #expect(machine.isOpen)
    }

    @Test("closed during the negotiation: named as a negotiation failure")
    func closedNegotiating() {
        var machine = Machine(version: .v35, localKey: Self.key)
        _ = machine.connected()
        guard case .close(let error)? = machine.closed(TetherError(.connectionClosed, "gone")).last else {
            Issue.record("expected a close")
            return
        }
        #expect(error.code == .sessionNegotiationFailed)
    }

    @Test("a close fails everything waiting, once")
    func close() {
        var machine = Machine(version: .v33, localKey: Self.key)
        _ = machine.connected()
        _ = machine.request(.init(id: 1, command: .query, payload: []))
        _ = machine.request(.init(id: 2, command: .control, payload: []))
        let error = TetherError(.connectionClosed, "gone")
        #expect(machine.closed(error) == [.fail(id: 1, error), .fail(id: 2, error), .close(error)])
        #expect(machine.closed(error).isEmpty)
        #expect(machine.received(Self.status(["1": true])).isEmpty)
    }

    @Test("nonces and GCM IVs: the lengths asked for, never the same twice")
    func randomBytes() {
        let ivs = (0..<64).map { _ in TuyaCrypto.randomBytes(12) }
        #expect(ivs.allSatisfy { $0.count == 12 })
        #expect(Set(ivs).count == ivs.count)
        #expect(TuyaCrypto.randomBytes(16).count == 16 && TuyaCrypto.randomBytes(1).count == 1)
    }
}

import Testing
import TetherCloudProtocol
import TetherCore

@testable import TetherCloudClient

/// The real-time client's request matching, run without a socket: waiters are plain names.
@Suite("CloudRealtimeStateMachine: requests matched to answers, without sockets")
struct CloudRealtimeStateMachineTests {
    typealias Machine = CloudRealtimeStateMachine<String, String, String, String>

    /// A readable line per action, so that a test states what the client does.
    private static func describe(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .answerLogin(let waiter, let result): "login \(waiter) \(result.success)"
            case .answerSubscription(let waiter, let result): "subscription \(waiter) failed \(result.failed.compactMap(\.did))"
            case .acknowledgeWrite(let waiter, let ack): "ack \(waiter) sn \(ack.sn) command \(ack.commandID.map(String.init) ?? "-")"
            case .failWrite(let waiter, let error): "write failed \(waiter) \(error.cloudCode.map(String.init) ?? "-")"
            case .answerRead(let waiter, let attrs): "read \(waiter) \(attrs.keys.sorted())"
            case .failRead(let waiter, let error): "read failed \(waiter) \(error.cloudCode.map(String.init) ?? "-")"
            case .emit(.status(let did, _, let sn)): "status \(did) sn \(sn.map(String.init) ?? "-")"
            case .emit(.writeFailed(let did, let sn, _)): "write failed later \(did) sn \(sn)"
            case .emit(let event): "emit \(event)"
            case .logRefusal(let code): "refusal \(code)"
            }
        }
    }

    /// The request a started call returns (a mutating call cannot sit inside `#require`).
    private static func started(_ request: (id: Int, frame: M2MFrame)?, sourceLocation: SourceLocation = #_sourceLocation) throws -> (id: Int, frame: M2MFrame) {
        try #require(request, "the connection is open", sourceLocation: sourceLocation)
    }

    /// A machine logged in, with `dids` subscribed.
    private static func open(subscribed dids: [String] = []) -> Machine {
        var machine = Machine()
        machine.subscribe(dids)
        _ = machine.loginStarted("login")
        _ = machine.loggedIn()
        return machine
    }

    @Test("nothing is sent before the login is answered; the login's answer goes to its waiter; subscriptions come back after it")
    func login() {
        var machine = Machine()
        machine.subscribe(["d2", "d1"])
        #expect(machine.startWrite(did: "d1", attrs: [:], sn: nil, waiter: "w") == nil)
        let loggingIn = machine.loginStarted("L")
        #expect(loggingIn)
        #expect(!machine.isOpen)
        #expect(machine.startRead(did: "d1", names: [], waiter: "r") == nil, "not while logging in")
        #expect(Self.describe(machine.receive(.loginResult(M2MLoginResult(success: true)))) == ["login L true"])
        #expect(machine.loggedIn() == ["d1", "d2"], "subscribed again, in a stable order")
        #expect(machine.isOpen)
    }

    @Test("writes get their own wire numbers; the caller's sn comes back with the acknowledgement and the report")
    func writes() throws {
        var machine = Self.open(subscribed: ["d1"])
        let first = try Self.started(machine.startWrite(did: "d1", attrs: ["on": true], sn: 5, waiter: "w1"))
        let second = try Self.started(machine.startWrite(did: "d1", attrs: ["on": false], sn: 5, waiter: "w2"))
        #expect(first.id != second.id, "two devices' (or callers') sn 5 do not collide on the connection")
        #expect(first.frame == .write(M2MWrite(sequence: .number(Int64(first.id)), did: "d1", attrs: ["on": true])))

        let ack = machine.receive(.writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(Int64(second.id)), did: "d1", commandID: 77)))
        #expect(Self.describe(ack) == ["ack w2 sn 5 command 77"])
        let report = machine.receive(.notification(M2MNotification(answering: .number(Int64(second.id)), did: "d1", attrs: ["on": false])))
        #expect(Self.describe(report) == ["status d1 sn 5"])
        let again = machine.receive(.notification(M2MNotification(answering: .number(Int64(second.id)), did: "d1", attrs: ["on": false])))
        #expect(Self.describe(again) == ["status d1 sn -"], "a report answers its write once")
        #expect(machine.receive(.writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(Int64(second.id)), did: "d1"))).isEmpty, "acknowledged once")
    }

    @Test("a read is answered by the notification carrying its number, not passed on as a report")
    func reads() throws {
        var machine = Self.open(subscribed: ["d1"])
        let read = try Self.started(machine.startRead(did: "d1", names: ["on"], waiter: "r"))
        #expect(read.frame == .read(M2MRead(sequence: .number(Int64(read.id)), did: "d1", names: ["on"])))
        let answer = machine.receive(.notification(M2MNotification(answering: .number(Int64(read.id)), did: "d1", attrs: ["on": true])))
        #expect(Self.describe(answer) == ["read r [\"on\"]"])
    }

    @Test("refusals: of a pending write or read fail it; of an acknowledged write say so later; others are logged")
    func refusals() throws {
        var machine = Self.open(subscribed: ["d1"])
        let write = try Self.started(machine.startWrite(did: "d1", attrs: [:], sn: 9, waiter: "w"))
        let read = try Self.started(machine.startRead(did: "d1", names: [], waiter: "r"))
        let refused = { (id: Int) in M2MFrame.invalid(M2MInvalid(sequence: .number(Int64(id)), errorCode: 9017, message: "not bound")) }
        #expect(Self.describe(machine.receive(refused(write.id))) == ["write failed w 9017"])
        #expect(Self.describe(machine.receive(refused(read.id))) == ["read failed r 9017"])

        let later = try Self.started(machine.startWrite(did: "d1", attrs: [:], sn: 10, waiter: "w2"))
        _ = machine.receive(.writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(Int64(later.id)), did: "d1")))
        #expect(Self.describe(machine.receive(refused(later.id))) == ["write failed later d1 sn 10"])
        #expect(Self.describe(machine.receive(refused(later.id))) == ["refusal 9017"], "nothing left to fail")
        #expect(Self.describe(machine.receive(.invalid(M2MInvalid(errorCode: 9004, message: "bad frame")))) == ["refusal 9004"])
    }

    @Test("subscription answers are matched in order; refused devices are dropped; abandoned waiters do not take an answer")
    func subscriptions() throws {
        var machine = Self.open()
        machine.subscribe(["a", "b", "c"])
        let first = try Self.started(machine.startSubscription(["a"], waiter: "s1"))
        _ = try Self.started(machine.startSubscription(["b", "c"], waiter: "s2"))
        machine.abandonSubscription(first.id)
        let answer = M2MSubscribeResult(success: [.init(did: "b")], failed: [.init(did: "c", errorCode: 9017, message: "not bound")])
        #expect(Self.describe(machine.receive(.subscribeResult(answer))) == ["subscription s2 failed [\"c\"]"])
        #expect(machine.isSubscribed("b"))
        #expect(!machine.isSubscribed("c"), "a refused device is not passed on, nor subscribed again")
        #expect(machine.receive(.subscribeResult(answer)).isEmpty, "an answer nobody waits for")
    }

    @Test("pushes reach the app only for subscribed devices; an unbinding unsubscribes")
    func pushes() {
        var machine = Self.open(subscribed: ["d1"])
        #expect(machine.receive(.notification(M2MNotification(did: "other", attrs: ["on": true]))).isEmpty)
        #expect(Self.describe(machine.receive(.notification(M2MNotification(did: "d1", attrs: ["on": true])))) == ["status d1 sn -"])
        #expect(machine.receive(.onlineStatus(M2MOnlineStatus(did: "other", passcode: "", mac: "", online: true))).isEmpty)
        #expect(machine.receive(.onlineStatus(M2MOnlineStatus(did: "d1", passcode: "", mac: "", online: false))).count == 1)
        #expect(machine.receive(.bindingChanged(did: "d1", bound: false)).count == 1, "the app hears of the unbinding")
        #expect(machine.receive(.notification(M2MNotification(did: "d1", attrs: ["on": true]))).isEmpty, "and nothing more of the device")
    }

    @Test("a lost connection hands back every waiter, once; a stale answer on the next connection matches nothing")
    func connectionLost() throws {
        var machine = Self.open(subscribed: ["d1"])
        let write = try Self.started(machine.startWrite(did: "d1", attrs: [:], sn: nil, waiter: "w"))
        _ = try Self.started(machine.startRead(did: "d1", names: [], waiter: "r"))
        _ = try Self.started(machine.startSubscription(["d1"], waiter: "s"))
        let orphans = machine.connectionClosed()
        #expect(orphans.writes == ["w"] && orphans.reads == ["r"] && orphans.subscriptions == ["s"] && orphans.login == nil)
        #expect(!machine.isOpen)
        #expect(machine.connectionClosed().writes.isEmpty, "each waiter once")

        let again = machine.loginStarted("L2")
        #expect(again)
        let lostLogin = machine.connectionClosed()
        #expect(lostLogin.login == "L2", "a login cut short is handed back too")
        _ = machine.loginStarted("L3")
        _ = machine.loggedIn()
        #expect(machine.receive(.writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(Int64(write.id)), did: "d1"))).isEmpty)
        let next = try Self.started(machine.startWrite(did: "d1", attrs: [:], sn: nil, waiter: "w2"))
        #expect(next.id > write.id, "wire numbers are never reused across connections")
    }

    @Test("after shutdown no connection starts")
    func shutdown() {
        var machine = Self.open()
        machine.shutDown()
        _ = machine.connectionClosed()
        #expect(machine.isShutDown)
        let started = machine.loginStarted("L")
        #expect(!started)
    }

    @Test("acknowledged writes whose report never comes are bounded")
    func boundedAcknowledgements() throws {
        var machine = Self.open(subscribed: ["d1"])
        var ids: [Int] = []
        for index in 0..<(Machine.maximumAcknowledgedWrites + 10) {
            let write = try Self.started(machine.startWrite(did: "d1", attrs: [:], sn: index + 1, waiter: "w"))
            _ = machine.receive(.writeAcknowledged(M2MWriteAcknowledgement(sequence: .number(Int64(write.id)), did: "d1")))
            ids.append(write.id)
        }
        let oldest = machine.receive(.notification(M2MNotification(answering: .number(Int64(ids[0])), did: "d1", attrs: [:])))
        #expect(Self.describe(oldest) == ["status d1 sn -"], "the oldest entry was dropped")
        let newest = machine.receive(.notification(M2MNotification(answering: .number(Int64(ids.last!)), did: "d1", attrs: [:])))
        #expect(Self.describe(newest) == ["status d1 sn \(Machine.maximumAcknowledgedWrites + 10)"])
    }
}

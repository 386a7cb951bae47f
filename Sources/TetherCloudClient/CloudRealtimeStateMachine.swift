import TetherCloudProtocol
import TetherCore

/// ``CloudRealtime``'s protocol logic as a value: the connection's phase, the devices it
/// passes pushes on for, and the requests waiting for their answers (the login, subscriptions
/// answered in order, writes and reads matched by the connection's own `req_sn`, acknowledged
/// writes waiting for the report that applies them). It takes what happens (a request, a frame,
/// a lost connection) and returns what to do; ``CloudRealtime`` owns the socket and runs it.
///
/// The waiters are whatever the owner resolves (promises in ``CloudRealtime``, plain values in
/// the tests, which run it without a socket).
struct CloudRealtimeStateMachine<Login: Sendable, Subscription: Sendable, Write: Sendable, Read: Sendable>: Sendable {
    enum Phase: Sendable {
        case closed
        case loggingIn(Login)
        /// Logged in: requests go out.
        case open
        /// No more connections.
        case shutDown
    }

    /// What the owner does after an input.
    enum Action: Sendable {
        case answerLogin(Login, M2MLoginResult)
        case answerSubscription(Subscription, M2MSubscribeResult)
        case acknowledgeWrite(Write, CloudWriteAcknowledgement)
        case failWrite(Write, TetherError)
        case answerRead(Read, JSONObject)
        case failRead(Read, TetherError)
        /// Pass on to the app.
        case emit(CloudRealtimeEvent)
        /// A refusal that answers no request of this connection.
        case logRefusal(code: Int)
    }

    /// Every waiter of a connection that ended, each to be failed.
    struct Orphans: Sendable {
        var login: Login?
        var subscriptions: [Subscription] = []
        var writes: [Write] = []
        var reads: [Read] = []
    }

    private struct PendingWrite: Sendable {
        var did: String
        /// The caller's sn, which the report answering the write carries back to it.
        var sn: Int
        var waiter: Write
    }

    /// Acknowledged writes whose report has not come yet are kept up to this many; beyond it,
    /// the oldest go (a report that never comes must not keep its entry forever).
    static var maximumAcknowledgedWrites: Int { 4096 }

    private(set) var phase: Phase = .closed
    /// The devices whose pushes are passed on, subscribed again after every login.
    private(set) var subscribed: Set<String> = []
    /// The connection's own `req_sn`s: callers' sequence numbers (one per device, each starting
    /// at 1) would collide on the shared connection. Never reused, so wire numbers only grow.
    private var nextSN = 1
    private var writes: [Int: PendingWrite] = [:]
    /// Acknowledged writes: wire `req_sn` → the device and the caller's sn.
    private var acknowledgedWrites: [Int: (did: String, sn: Int)] = [:]
    private var reads: [Int: Read] = [:]
    /// Subscription answers carry no `req_sn`: they are matched in order.
    private var subscriptions: [(id: Int, waiter: Subscription)] = []
    private var nextSubscriptionID = 0

    init() {}

    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    var isShutDown: Bool {
        if case .shutDown = phase { return true }
        return false
    }

    // MARK: The connection

    /// A socket is open and the login is about to be sent; false when shut down.
    mutating func loginStarted(_ login: Login) -> Bool {
        guard !isShutDown else { return false }
        phase = .loggingIn(login)
        return true
    }

    /// The cloud accepted the login: requests go out from now on. Returns the devices to
    /// subscribe again, in a stable order.
    mutating func loggedIn() -> [String] {
        guard case .loggingIn = phase else { return [] }
        phase = .open
        return subscribed.sorted()
    }

    /// The connection ended (or its login failed): every waiter of it is returned to be failed,
    /// since its answer cannot come on another connection, and a stale subscription waiter
    /// would take the next connection's answer.
    mutating func connectionClosed() -> Orphans {
        var orphans = Orphans()
        if case .loggingIn(let login) = phase { orphans.login = login }
        orphans.subscriptions = subscriptions.map(\.waiter)
        orphans.writes = writes.values.map(\.waiter)
        orphans.reads = Array(reads.values)
        subscriptions = []
        writes = [:]
        reads = [:]
        if !isShutDown { phase = .closed }
        return orphans
    }

    /// No more connections; the open one is closed by the owner, then ``connectionClosed()``.
    mutating func shutDown() {
        phase = .shutDown
    }

    // MARK: Requests

    /// Devices to pass pushes on for, from now on and after every reconnection.
    mutating func subscribe(_ dids: [String]) {
        subscribed.formUnion(dids)
    }

    mutating func unsubscribe(_ did: String) {
        subscribed.remove(did)
    }

    func isSubscribed(_ did: String) -> Bool { subscribed.contains(did) }

    /// A subscription request: its frame to send and its id (to abandon it), or nil when the
    /// connection is not open.
    mutating func startSubscription(_ dids: [String], waiter: Subscription) -> (id: Int, frame: M2MFrame)? {
        guard isOpen else { return nil }
        nextSubscriptionID += 1
        subscriptions.append((nextSubscriptionID, waiter))
        return (nextSubscriptionID, .subscribe(dids: dids))
    }

    /// A write: its wire number (its id) and frame, or nil when the connection is not open.
    mutating func startWrite(did: String, attrs: JSONObject, sn: Int?, waiter: Write) -> (id: Int, frame: M2MFrame)? {
        guard isOpen else { return nil }
        let number = takeSN()
        writes[number] = PendingWrite(did: did, sn: sn ?? number, waiter: waiter)
        return (number, .write(M2MWrite(sequence: .number(Int64(number)), did: did, attrs: attrs)))
    }

    /// A read: its wire number (its id) and frame, or nil when the connection is not open.
    mutating func startRead(did: String, names: [String], waiter: Read) -> (id: Int, frame: M2MFrame)? {
        guard isOpen else { return nil }
        let number = takeSN()
        reads[number] = waiter
        return (number, .read(M2MRead(sequence: .number(Int64(number)), did: did, names: names.isEmpty ? nil : names)))
    }

    /// A request whose caller stopped waiting (timeout, cancellation): its answer, if it comes,
    /// is no longer matched to it.
    mutating func abandonWrite(_ number: Int) { writes[number] = nil }
    mutating func abandonRead(_ number: Int) { reads[number] = nil }
    mutating func abandonSubscription(_ id: Int) { subscriptions.removeAll { $0.id == id } }

    private mutating func takeSN() -> Int {
        defer { nextSN += 1 }
        return nextSN
    }

    // MARK: Frames from the cloud

    /// One frame from the cloud: what to resolve and what to pass on.
    mutating func receive(_ frame: M2MFrame) -> [Action] {
        switch frame {
        case .loginResult(let result):
            guard case .loggingIn(let login) = phase else { return [] }
            return [.answerLogin(login, result)]
        case .subscribeResult(let result):
            guard !subscriptions.isEmpty else { return [] }
            let waiter = subscriptions.removeFirst().waiter
            // A refused device is not passed on, nor subscribed again after a reconnection.
            for entry in result.failed { if let did = entry.did { subscribed.remove(did) } }
            return [.answerSubscription(waiter, result)]
        case .writeAcknowledged(let acknowledgement):
            guard let number = acknowledgement.sequence?.number.map(Int.init), let write = writes.removeValue(forKey: number) else { return [] }
            if acknowledgedWrites.count >= Self.maximumAcknowledgedWrites {
                let oldest = nextSN - Self.maximumAcknowledgedWrites / 2
                acknowledgedWrites = acknowledgedWrites.filter { $0.key >= oldest }
            }
            acknowledgedWrites[number] = (write.did, write.sn)
            return [.acknowledgeWrite(write.waiter, CloudWriteAcknowledgement(sn: write.sn, commandID: acknowledgement.commandID))]
        case .notification(let notification):
            let number = notification.answering?.number.map(Int.init)
            if let number, let read = reads.removeValue(forKey: number) {
                return [.answerRead(read, notification.attrs)]
            }
            // The caller's sn of the write this report answers; nil for a report nobody here asked for.
            let answered = number.flatMap { number in acknowledgedWrites.removeValue(forKey: number)?.sn ?? writes[number]?.sn }
            guard isSubscribed(notification.did) else { return [] }
            return [.emit(.status(did: notification.did, attrs: notification.attrs, sn: answered))]
        case .invalid(let invalid):
            let error = TetherError(.cloudRefused, invalid.message.isEmpty ? "refused" : invalid.message, cloudCode: invalid.errorCode)
            guard let number = invalid.sequence?.number.map(Int.init) else { return [.logRefusal(code: invalid.errorCode)] }
            var actions: [Action] = []
            if let write = writes.removeValue(forKey: number) { actions.append(.failWrite(write.waiter, error)) }
            if let read = reads.removeValue(forKey: number) { actions.append(.failRead(read, error)) }
            if let acknowledged = acknowledgedWrites.removeValue(forKey: number) {
                actions.append(.emit(.writeFailed(did: acknowledged.did, sn: acknowledged.sn, error: error)))
            }
            return actions.isEmpty ? [.logRefusal(code: invalid.errorCode)] : actions
        case .onlineStatus(let status):
            guard isSubscribed(status.did) else { return [] }
            return [.emit(.online(did: status.did, online: status.online))]
        case .bindingChanged(let did, let bound):
            if !bound { subscribed.remove(did) }
            return [.emit(.bindingChanged(did: did, bound: bound))]
        case .rawReport(let raw):
            guard isSubscribed(raw.did) else { return [] }
            return [.emit(.raw(did: raw.did, bytes: raw.bytes))]
        case .event(let event):
            guard isSubscribed(event.did) else { return [] }
            return [.emit(.event(did: event.did, identifier: event.identifier, type: event.type, values: event.values))]
        case .userTopic(let message):
            guard isSubscribed(message.did) else { return [] }
            return [.emit(.userTopic(did: message.did, topic: message.topic, payload: message.payload))]
        case .upgrade(let upgrade):
            guard isSubscribed(upgrade.did) else { return [] }
            return [.emit(.upgrade(FirmwareUpgrade(upgrade)))]
        case .message(let message):
            return [.emit(.message(CloudMessage(message)))]
        case .pairing(let status):
            return [.emit(.pairing(PairingStatus(status)))]
        case .schedules(let change):
            return [.emit(.schedules(change))]
        case .pong, .login, .subscribe, .write, .read, .raw, .acknowledge, .ping:
            return []
        }
    }
}

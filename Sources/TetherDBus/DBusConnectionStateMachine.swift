import TetherCore

/// The connection's logic as a value: it takes what happens (the socket opened, a line or a
/// message arrived, a call was made or cancelled, the socket closed) and says what to do. No
/// sockets and no locks, so that every path is tested as plain values.
///
/// `Waiter` is whoever waits for a reply; `Subscriber` whoever receives signals.
struct DBusConnectionStateMachine<Waiter, Subscriber> {
    enum State {
        case idle
        case authenticating
        case awaitingHello(serial: UInt32)
        case running(uniqueName: String)
        case closed(TetherError)
    }

    private(set) var state: State = .idle
    private var lastSerial: UInt32 = 0
    private var waiters: [UInt32: Waiter] = [:]
    /// Calls cancelled before their waiter was registered.
    private var cancelledEarly: Set<UInt32> = []
    private var subscribers: [Int: (rule: DBusMatchRule, owner: String?, subscriber: Subscriber)] = [:]
    private var lastSubscriberID = 0

    enum Action {
        case write(DBusOutbound)
        case writeAll([DBusOutbound])
        /// The connection is ready, with the unique name the bus gave it.
        case ready(String)
        /// The connection could not be set up.
        case failStartup(TetherError)
        case resume(Waiter, Result<DBusMessage, TetherError>)
        case deliver([Subscriber], DBusMessage)
        /// A method call addressed to this connection.
        case dispatch(DBusMessage)
        case none
    }

    /// The socket is open: authenticate as the process's user (SASL EXTERNAL).
    mutating func started(uid: UInt32) -> Action {
        guard case .idle = state else { return .none }
        state = .authenticating
        let hexUID = String(uid).utf8.map { String($0, radix: 16) }.joined()
        return .write(.authentication("\0AUTH EXTERNAL \(hexUID)\r\n"))
    }

    mutating func received(_ inbound: DBusInbound) -> Action {
        switch (state, inbound) {
        case (.authenticating, .authenticationLine(let line)):
            guard line.hasPrefix("OK") else {
                let error = TetherError(.connectionFailed, "the bus refused authentication: \(line.prefix(200))")
                state = .closed(error)
                return .failStartup(error)
            }
            let hello = DBusMessage(
                kind: .methodCall, serial: nextSerial(), path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "Hello",
                destination: "org.freedesktop.DBus")
            state = .awaitingHello(serial: hello.serial)
            return .writeAll([.authentication("BEGIN\r\n"), .message(hello)])
        case (.awaitingHello(let serial), .message(let message)) where message.replySerial == serial:
            guard message.kind == .methodReturn, case .string(let name)? = message.body.first else {
                let error = TetherError(.connectionFailed, "the bus refused Hello: \(message.errorName ?? "no name")")
                state = .closed(error)
                return .failStartup(error)
            }
            state = .running(uniqueName: name)
            return .ready(name)
        case (.running, .message(let message)):
            switch message.kind {
            case .methodReturn, .error:
                guard let serial = message.replySerial, let waiter = waiters.removeValue(forKey: serial) else { return .none }
                return .resume(waiter, .success(message))
            case .signal:
                let matched = subscribers.values.filter { $0.rule.matches(message, owner: $0.owner) }.map(\.subscriber)
                return matched.isEmpty ? .none : .deliver(matched, message)
            case .methodCall:
                return .dispatch(message)
            }
        case (.closed, _), (.idle, _):
            return .none
        case (.authenticating, .message), (.awaitingHello, _), (.running, .authenticationLine):
            // Signals before Hello's reply (none are expected) and stray lines are ignored.
            return .none
        }
    }

    /// Gives a message its serial; nil once the connection is closed or not yet running.
    mutating func outgoing(_ message: DBusMessage) -> Result<DBusMessage, TetherError> {
        guard case .running = state else { return .failure(notRunning) }
        var message = message
        message.serial = nextSerial()
        return .success(message)
    }

    /// Registers the waiter of a call already given its serial by `outgoing`.
    mutating func wait(serial: UInt32, _ waiter: Waiter) -> Action {
        if cancelledEarly.remove(serial) != nil { return .resume(waiter, .failure(Self.cancelled)) }
        guard case .running = state else { return .resume(waiter, .failure(notRunning)) }
        waiters[serial] = waiter
        return .none
    }

    /// The call's caller gave up (cancelled, timed out): its waiter, if still waiting.
    mutating func abandon(serial: UInt32, _ error: TetherError) -> Action {
        if let waiter = waiters.removeValue(forKey: serial) { return .resume(waiter, .failure(error)) }
        if serial > 0, serial <= lastSerial { cancelledEarly.insert(serial) }
        return .none
    }

    /// The bus's unique name for this connection once running.
    var uniqueName: String? {
        if case .running(let name) = state { return name }
        return nil
    }

    mutating func subscribe(_ rule: DBusMatchRule, owner: String?, _ subscriber: Subscriber) -> Int {
        lastSubscriberID += 1
        subscribers[lastSubscriberID] = (rule, owner, subscriber)
        return lastSubscriberID
    }

    mutating func unsubscribe(_ id: Int) -> DBusMatchRule? {
        subscribers.removeValue(forKey: id)?.rule
    }

    /// The socket closed: everyone waiting is failed and every subscriber ended.
    mutating func closed(_ error: TetherError) -> (startup: TetherError?, waiters: [Waiter], subscribers: [Subscriber]) {
        let startup: TetherError?
        switch state {
        case .closed: return (nil, [], [])
        case .running: startup = nil
        default: startup = error
        }
        state = .closed(error)
        let result = (startup, Array(waiters.values), subscribers.values.map(\.subscriber))
        waiters = [:]
        subscribers = [:]
        cancelledEarly = []
        return result
    }

    private mutating func nextSerial() -> UInt32 {
        lastSerial = lastSerial == UInt32.max ? 1 : lastSerial + 1
        return lastSerial
    }

    private var notRunning: TetherError {
        if case .closed(let error) = state { return error }
        return TetherError(.connectionClosed, "the D-Bus connection is not ready")
    }

    static var cancelled: TetherError { TetherError(.cancelled, "the D-Bus call was cancelled") }
}

import TetherCore

/// The app's side of one Tuya connection as a value: the 3.4/3.5 negotiation, then requests one
/// at a time (devices answer in order and handle one at a time), each answered by the first
/// message with its command, and everything else the device sends as a report. Sequence numbers
/// are the app's own counter; answers are never matched on them (§6: 3.5 devices and pushes use
/// their own). Events in, actions out; ``TuyaClientHandler`` runs it on a channel.
struct TuyaClientStateMachine: Sendable {
    struct Request: Sendable, Equatable {
        let id: Int
        let command: TuyaCommand
        let payload: [UInt8]
    }

    enum Action: Sendable, Equatable {
        case write(TuyaMessage)
        /// Frames in both directions use this key from now on (after `SESS_KEY_NEG_FINISH`).
        case useKey([UInt8])
        /// The connection is ready for requests.
        case established
        /// The request's answer (also for a request whose caller stopped waiting: its deadline ends).
        case answer(id: Int, TuyaMessage)
        case fail(id: Int, TetherError)
        /// The caller of the request on the wire stopped waiting: it fails now, but the request
        /// keeps its place and its deadline until the device answers.
        case abandoned(id: Int, TetherError)
        /// Data points the device sent that no request was waiting for (a `STATUS` push).
        case report(TuyaStatus)
        /// Something the device sent that could not be read; the connection goes on.
        case unreadable(TetherError)
        /// Close the connection: every request has been failed with this error.
        case close(TetherError)
    }

    private enum Phase: Sendable {
        case idle
        case negotiating(TuyaHandshake.App)
        case open
        case closed(TetherError)
    }

    let version: TuyaVersion
    private let localKey: [UInt8]
    private var phase = Phase.idle
    private var queue: [Request] = []
    /// The request on the wire; `abandoned` when its caller stopped waiting (its answer is dropped).
    private var inFlight: (request: Request, abandoned: Bool)?
    private var sequence: UInt32 = 0
    private let clientNonce: [UInt8]?

    init(version: TuyaVersion, localKey: [UInt8], clientNonce: [UInt8]? = nil) {
        self.version = version
        self.localKey = localKey
        self.clientNonce = clientNonce
    }

    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// The TCP connection is up: negotiate, or be ready at once on 3.1–3.3.
    mutating func connected() -> [Action] {
        guard case .idle = phase else { return [] }
        guard version.negotiatesSessionKey else {
            phase = .open
            return [.established] + sendNext()
        }
        do throws(TetherError) {
            let handshake = try TuyaHandshake.App(version: version, localKey: localKey, clientNonce: clientNonce)
            phase = .negotiating(handshake)
            return [.write(handshake.start(sequence: nextSequence()))]
        } catch {
            return close(error)
        }
    }

    mutating func request(_ request: Request) -> [Action] {
        if case .closed(let error) = phase { return [.fail(id: request.id, error)] }
        queue.append(request)
        return isOpen ? sendNext() : []
    }

    /// A message without an answer of its own, written now when the session is open.
    mutating func send(_ command: TuyaCommand, _ payload: [UInt8]) -> [Action] {
        guard isOpen else { return [] }
        return [.write(TuyaMessage(sequence: nextSequence(), command: command, payload: payload))]
    }

    mutating func received(_ message: TuyaMessage) -> [Action] {
        switch phase {
        case .idle, .closed:
            return []
        case .negotiating(let handshake):
            guard message.command == .sessionKeyResponse else {
                return close(TetherError(.sessionNegotiationFailed, "step 2: the device sent \(message.command) instead of SESS_KEY_NEG_RESP"))
            }
            do throws(TetherError) {
                let (finish, key) = try handshake.finish(after: message, sequence: nextSequence())
                phase = .open
                return [.write(finish), .useKey(key), .established] + sendNext()
            } catch {
                return close(error)
            }
        case .open:
            if let current = inFlight, Self.answers(message.command, current.request.command) {
                inFlight = nil
                return [.answer(id: current.request.id, message)] + sendNext()
            }
            guard !message.payload.isEmpty, message.command != .heartbeat else { return [] }
            do throws(TetherError) {
                return [.report(try TuyaStatus(parsing: message.payload))]
            } catch {
                return [.unreadable(error)]
            }
        }
    }

    /// The caller of `id` stopped waiting (its deadline, or cancellation). A request still
    /// queued just leaves; the one on the wire keeps its place (and its deadline) until its
    /// answer, unless `connectionIsSuspect`: a device that does not answer in time is gone, and
    /// the connection closes.
    mutating func abandon(_ id: Int, error: TetherError, connectionIsSuspect: Bool) -> [Action] {
        if let index = queue.firstIndex(where: { $0.id == id }) {
            queue.remove(at: index)
            return [.fail(id: id, error)]
        }
        guard let current = inFlight, current.request.id == id else { return [] }
        // Its deadline passed, cancelled or not: the device is not answering.
        if connectionIsSuspect { return close(error) }
        guard !current.abandoned else { return [] }
        inFlight?.abandoned = true
        return [.abandoned(id: id, error)]
    }

    /// The connection closed (or failed): every request fails with `error`.
    mutating func closed(_ error: TetherError) -> [Action] {
        switch phase {
        case .closed:
            return []
        case .negotiating:
            // A device closes on a START it cannot open: sealed with another local key.
            return close(TetherError(.sessionNegotiationFailed, "step 1: the device closed the connection at SESS_KEY_NEG_START (a wrong local key?)"))
        case .idle, .open:
            return close(error)
        }
    }

    /// Negotiation errors, decryption failures of the stream and other fatal conditions.
    mutating func failed(_ error: TetherError) -> [Action] {
        if case .closed = phase { return [] }
        if case .negotiating = phase, error.code == .integrityCheckFailed || error.code == .decryptionFailed {
            return close(TetherError(.sessionNegotiationFailed, "step 2: the device's answer does not open with the local key (a wrong local key?)"))
        }
        return close(error)
    }

    private mutating func close(_ error: TetherError) -> [Action] {
        var actions: [Action] = []
        if let current = inFlight, !current.abandoned { actions.append(.fail(id: current.request.id, error)) }
        actions += queue.map { .fail(id: $0.id, error) }
        inFlight = nil
        queue = []
        phase = .closed(error)
        return actions + [.close(error)]
    }

    private mutating func sendNext() -> [Action] {
        guard inFlight == nil, !queue.isEmpty else { return [] }
        let request = queue.removeFirst()
        inFlight = (request, false)
        return [.write(TuyaMessage(sequence: nextSequence(), command: request.command, payload: request.payload))]
    }

    private mutating func nextSequence() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    /// Which command answers a request: its own (devices answer `CONTROL` with `CONTROL`, and
    /// reads with the read's command).
    private static func answers(_ command: TuyaCommand, _ request: TuyaCommand) -> Bool {
        command == request
    }
}

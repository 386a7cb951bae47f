/// When a connection must make progress, as a value: events in, the timer to run out.
///
/// While a request's body is being read it must end within the body timeout; while no request
/// is being read or answered, the next head must come within the idle timeout; while the
/// application answers, the client waits and nothing is timed.
struct HTTPRequestDeadlines: Sendable, Equatable {
    enum Timer: Sendable, Equatable {
        case idle
        case body
    }

    enum Action: Sendable, Equatable {
        /// Start `timer`, replacing any running one; its firing reports `generation`.
        case arm(Timer, generation: Int)
        case cancel
        case close
        case none
    }

    private(set) var reading = false
    private(set) var unanswered = 0
    private(set) var armed: Timer?
    private(set) var generation = 0
    private(set) var closed = false

    /// The connection is ready for its first request.
    mutating func start() -> Action { update() }

    mutating func headReceived() -> Action {
        reading = true
        unanswered += 1
        // A new head restarts the body deadline even if one was running (pipelining).
        armed = nil
        return update()
    }

    mutating func requestEnded() -> Action {
        reading = false
        return update()
    }

    mutating func responseEnded() -> Action {
        unanswered = max(0, unanswered - 1)
        return update()
    }

    mutating func timerFired(generation fired: Int) -> Action {
        guard !closed, armed != nil, fired == generation else { return .none }
        closed = true
        armed = nil
        return .close
    }

    private mutating func update() -> Action {
        guard !closed else { return .none }
        let wanted: Timer? = reading ? .body : (unanswered == 0 ? .idle : nil)
        guard wanted != armed else { return .none }
        armed = wanted
        guard let wanted else { return .cancel }
        generation += 1
        return .arm(wanted, generation: generation)
    }
}

import TetherCore

/// What the simulated devices and apps saw happen, kept for the checks against the database at
/// the end: each side's own account, never the cloud's.
final class SoakRecords: Sendable {
    /// A property post, known by the `Label` it carried: unique to the post, except that a
    /// device echoes a write's `Label` after each delivery of it (the cloud marks the write
    /// applied only when a report shows its values), so posts are counted per label.
    struct Post: Hashable, Sendable {
        var did: String
        var label: String
    }

    /// A property set a device received (by its Alink id, which is the ledger's command id).
    struct Delivery: Sendable {
        var did: String
        var label: String?
        var times = 1
        /// A connection of the device began to send its 200 (it may not have arrived).
        var replySent = false
    }

    /// A write the cloud accepted: its answer named a ledger entry.
    struct Write: Sendable {
        var commandID: Int64
        var did: String
        /// The index of the user who wrote it.
        var user: Int
        var label: String
        var node: Int
        var queued: Bool
    }

    struct State {
        /// Posts answered 200, each label with how many times.
        var posts: [Post: Int] = [:]
        var postsRefused: [Int: Int] = [:]
        var postsUnanswered = 0
        var deliveries: [Int64: Delivery] = [:]
        var answersLost = 0
        var writes: [Write] = []
        var writesRefused: [String: Int] = [:]
        /// The first final state a read of the command saw, by command id.
        var finalSeen: [Int64: String] = [:]
        var reads: [String: Int] = [:]
        var faults: [String: Int] = [:]
        var sessions = 0
        var failedConnections = 0
        /// Takeovers after which the older connection still worked 10 s later.
        var takeoversNotEnforced = 0
        var twins = 0
        var ghosts = 0
        var ghostsRefused = 0
    }

    private let state = Locked(State())

    func update<Result>(_ body: (inout State) -> Result) -> Result { state.withLock { body(&$0) } }
    var snapshot: State { state.withLock { $0 } }

    func posted(did: String, label: String, code: Int?) {
        state.withLock { state in
            switch code {
            case 200?: state.posts[Post(did: did, label: label), default: 0] += 1
            case let code?: state.postsRefused[code, default: 0] += 1
            case nil: state.postsUnanswered += 1
            }
        }
    }

    func received(commandID: Int64, did: String, label: String?) {
        state.withLock { state in
            if state.deliveries[commandID] != nil {
                state.deliveries[commandID]!.times += 1
            } else {
                state.deliveries[commandID] = Delivery(did: did, label: label)
            }
        }
    }

    /// Recorded just before the reply goes out: a ledger that shows an answer to a set the
    /// device never began to answer contradicts it.
    func replying(commandID: Int64) { state.withLock { $0.deliveries[commandID]?.replySent = true } }

    /// A set whose answer was never sent (the connection ended first) or whose sending failed.
    func answerLost() { state.withLock { $0.answersLost += 1 } }

    func count(fault: SoakFault) { state.withLock { $0.faults[fault.rawValue, default: 0] += 1 } }
}

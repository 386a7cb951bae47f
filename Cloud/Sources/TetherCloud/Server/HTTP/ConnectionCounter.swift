import Synchronization

/// How many connections each source has open, shared by every event loop of one listener.
final class ConnectionCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Counts a new connection from `source`; false (and nothing counted) when it already has
    /// `limit` open.
    func open(_ source: String) -> Bool {
        counts.withLock { counts in
            let open = counts[source, default: 0]
            guard open < limit else { return false }
            counts[source] = open + 1
            return true
        }
    }

    func close(_ source: String) {
        counts.withLock { counts in
            guard let open = counts[source] else { return }
            counts[source] = open > 1 ? open - 1 : nil
        }
    }

    func openConnections(from source: String) -> Int { counts.withLock { $0[source, default: 0] } }
}

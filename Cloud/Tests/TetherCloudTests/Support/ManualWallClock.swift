import Synchronization
@testable import TetherCloud

/// A clock the test moves: the scheduler fires at the time it is set to.
final class ManualWallClock: WallClock {
    private let milliseconds: Mutex<Int64>

    init(unixSeconds: Int64) { milliseconds = Mutex(unixSeconds * 1000) }

    func nowMs() -> Int64 { milliseconds.withLock { $0 } }

    func set(unixSeconds: Int64) { milliseconds.withLock { $0 = unixSeconds * 1000 } }

    func advance(seconds: Int64) { milliseconds.withLock { $0 += seconds * 1000 } }
}

/// The time as the scheduler reads it: the system's by default, a test's that it moves by hand.
public protocol WallClock: Sendable {
    /// Unix milliseconds.
    func nowMs() -> Int64
}

public struct SystemWallClock: WallClock {
    public init() {}

    public func nowMs() -> Int64 { Clock.unixMilliseconds() }
}

import Synchronization

/// How a simulated Tuya device misbehaves on purpose, so that apps can test their handling of
/// slow and vanishing devices (tuyamock's `response_delay` and `go_dark_after`, with outages that
/// repeat).
public struct TuyaFaults: Sendable, Hashable {
    /// Every answer and push is sent this much later.
    public var responseDelay: Duration
    /// After this many frames sent (answers and pushes, on any connection), the device sends
    /// nothing for ``darkFor``; then it counts again. Nil: never.
    public var goDarkAfter: Int?
    public var darkFor: Duration

    public init(responseDelay: Duration = .zero, goDarkAfter: Int? = nil, darkFor: Duration = .seconds(10)) {
        self.responseDelay = responseDelay
        self.goDarkAfter = goDarkAfter
        self.darkFor = darkFor
    }
}

/// Applies ``TuyaFaults`` to what a device sends, across its connections.
final class TuyaFaultInjector: Sendable {
    private struct State {
        var sent = 0
        var darkUntil: ContinuousClock.Instant?
    }

    let faults: TuyaFaults
    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant

    init(_ faults: TuyaFaults, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.faults = faults
        self.now = now
    }

    /// The delay before a frame goes out, or nil when the device is dark and the frame is dropped.
    func answer() -> Duration? {
        guard let limit = faults.goDarkAfter else { return faults.responseDelay }
        let now = now()
        return state.withLock { state -> Duration? in
            if let until = state.darkUntil {
                guard now >= until else { return nil }
                state.darkUntil = nil
                state.sent = 0
            }
            guard state.sent < limit else {
                state.darkUntil = now + faults.darkFor
                return nil
            }
            state.sent += 1
            return faults.responseDelay
        }
    }
}

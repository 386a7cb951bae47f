@testable import TetherCloud

/// Rate limits count in windows aligned on the clock (`RateLimiter`): a test that counts
/// attempts up to a limit fails if a window ends in the middle of it (the counts start again),
/// which happened on a loaded CI machine with 10- and 15-minute windows. Such tests count in a
/// window whose end is decades away.
enum RateWindows {
    /// About a hundred years: the current window ends in 2069.
    static let unending: Int64 = 3_153_600_000

    /// The login failure limits at their production counts, in an unending window.
    @Sendable static func unendingLoginLimits(_ configuration: inout CloudConfiguration) {
        configuration.abuse.loginFailuresPerAccountAndSource = RateLimit(10, per: unending)
        configuration.abuse.loginFailuresPerAccount = RateLimit(100, per: unending)
    }
}

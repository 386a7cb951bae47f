import Foundation

/// Rate limits count in windows aligned on the clock (`RateLimiter`): a test that counts
/// attempts up to a limit fails if a window ends in the middle of it (the counts start again).
/// Such a test waits first, when a window of one of its lengths ends within `margin` seconds.
enum RateWindows {
    static func awayFromBoundary(_ windows: [Int64], margin: Int64 = 30) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let wait = windows.map { window -> Int64 in
            let left = window - now % window
            return left < margin ? left + 1 : 0
        }.max() ?? 0
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
    }
}

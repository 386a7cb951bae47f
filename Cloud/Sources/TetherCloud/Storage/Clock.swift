import Foundation

enum Clock {
    static func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }
    static func unixMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

import Foundation

enum Clock {
    static func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }
}

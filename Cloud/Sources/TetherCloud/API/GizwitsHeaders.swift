import Foundation
import HTTPTypes
import Hummingbird

/// The reference's request headers (gizwits-openapi.md §1). Names are case-insensitive, as
/// clients differ (`X-Gizwits-User-token`, `X-Gizwits-User-Token`).
extension HTTPField.Name {
    static let gizwitsApplicationID = Self("X-Gizwits-Application-Id")!
    static let gizwitsUserToken = Self("X-Gizwits-User-token")!
    static let gizwitsApplicationToken = Self("X-Gizwits-Application-Token")!
    static let gizwitsApplicationAuth = Self("X-Gizwits-Application-Auth")!
    static let gizwitsTimestamp = Self("X-Gizwits-Timestamp")!
    static let gizwitsSignature = Self("X-Gizwits-Signature")!
}

extension Request {
    func header(_ name: HTTPField.Name) -> String? {
        headers[name]?.trimmingCharacters(in: .whitespaces)
    }

    func query(_ name: String) -> String? {
        uri.queryParameters.get(name)
    }

    /// A non-negative integer query parameter, `defaultValue` when absent.
    func integerQuery(_ name: String, default defaultValue: Int64, range: ClosedRange<Int64>) throws(CloudAPIError) -> Int64 {
        try optionalIntegerQuery(name, range: range) ?? defaultValue
    }

    /// An integer query parameter in `range`, nil when absent.
    func optionalIntegerQuery(_ name: String, range: ClosedRange<Int64>) throws(CloudAPIError) -> Int64? {
        guard let text = query(name), !text.isEmpty else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw .formInvalid(detail: "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A query parameter that must be there.
    func requiredQuery(_ name: String) throws(CloudAPIError) -> String {
        guard let text = query(name), !text.isEmpty else { throw .formInvalid(detail: "\(name) is required") }
        return text
    }
}

extension RequestContext {
    func pathParameter(_ name: String) throws(CloudAPIError) -> String {
        guard let value = parameters.get(name), !value.isEmpty else {
            throw .formInvalid(detail: "\(name) is missing from the path")
        }
        return value
    }
}

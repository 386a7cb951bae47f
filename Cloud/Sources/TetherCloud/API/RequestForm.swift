import Foundation
import Hummingbird
import NIOCore
import TetherCore

/// The JSON body of a request, read field by field. A field of the wrong type, or a body that
/// is not a JSON object, is answered with 9015 "form invalid" naming the field.
struct RequestForm: Sendable {
    static let maximumBodySize = 64 * 1024

    let object: JSONObject

    init(object: JSONObject) { self.object = object }

    static func decode(_ request: Request) async throws -> RequestForm {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBodySize)
        } catch {
            throw CloudAPIError.formInvalid(detail: "the body is larger than \(maximumBodySize) bytes")
        }
        if buffer.readableBytes == 0 { return RequestForm(object: [:]) }
        // curl and some firmware label JSON as a form; a body starting with `{` is JSON.
        if isFormEncoded(request), buffer.readableBytesView.first != UInt8(ascii: "{") {
            return RequestForm(object: formFields(String(buffer: buffer)))
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(buffer.readableBytesView)
        } catch {
            throw CloudAPIError.formInvalid(detail: "the body is not valid JSON")
        }
        guard case .object(let object) = value else {
            throw CloudAPIError.formInvalid(detail: "the body must be a JSON object")
        }
        return RequestForm(object: object)
    }

    private static func isFormEncoded(_ request: Request) -> Bool {
        request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
    }

    /// `a=1&b=2`, as GAgent firmware posts to `/dev/devices`.
    private static func formFields(_ text: String) -> JSONObject {
        var object = JSONObject()
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let rawValue = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
            object[key] = .string(rawValue.removingPercentEncoding ?? rawValue)
        }
        return object
    }

    func has(_ key: String) -> Bool {
        if let value = object[key], value != .null { return true }
        return false
    }

    func optionalString(_ key: String) throws(CloudAPIError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw .formInvalid(detail: "\(key) must be a string")
        }
    }

    /// A required, non-empty string.
    func string(_ key: String) throws(CloudAPIError) -> String {
        guard let text = try optionalString(key), !text.isEmpty else {
            throw .formInvalid(detail: "\(key) is required")
        }
        return text
    }

    func optionalInt(_ key: String) throws(CloudAPIError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let value)?: return value
        case .string(let text)?:
            guard let value = Int64(text) else { throw .formInvalid(detail: "\(key) must be an integer") }
            return value
        default: throw .formInvalid(detail: "\(key) must be an integer")
        }
    }

    func optionalArray(_ key: String) throws(CloudAPIError) -> [JSONValue]? {
        switch object[key] {
        case nil, .null?: return nil
        case .array(let array)?: return array
        default: throw .formInvalid(detail: "\(key) must be an array")
        }
    }

    /// `{"devices": [{…}, …]}`: each element must be an object.
    func objects(_ key: String) throws(CloudAPIError) -> [RequestForm] {
        guard let array = try optionalArray(key) else { throw .formInvalid(detail: "\(key) is required") }
        var forms: [RequestForm] = []
        for (index, element) in array.enumerated() {
            guard case .object(let object) = element else {
                throw .formInvalid(detail: "\(key)[\(index)] must be an object")
            }
            forms.append(RequestForm(object: object))
        }
        return forms
    }

    func stringArray(_ key: String) throws(CloudAPIError) -> [String]? {
        guard let array = try optionalArray(key) else { return nil }
        var strings: [String] = []
        for element in array {
            guard case .string(let text) = element else { throw .formInvalid(detail: "\(key) must be an array of strings") }
            strings.append(text)
        }
        return strings
    }
}

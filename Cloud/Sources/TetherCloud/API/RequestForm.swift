import Foundation
import Hummingbird
import NIOCore
import TetherCore
import TetherCloudProtocol

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

    /// The body as the endpoint's typed request; what it lacks is answered 9015 naming the field.
    func decode<Body>(_ body: (JSONValue) throws(CloudBodyError) -> Body) throws(CloudAPIError) -> Body {
        do {
            return try body(.object(object))
        } catch {
            throw .formInvalid(detail: error.description)
        }
    }

    /// Reads the request's body as `Body`.
    static func decode<Body>(_ request: Request, as body: (JSONValue) throws(CloudBodyError) -> Body) async throws -> Body {
        try await decode(request).decode(body)
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
}

import TetherCore

/// Why a body is not what its endpoint answers or takes.
public struct CloudBodyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field, in JSON spelling (`devices[2].did`).
    public var field: String
    public var message: String

    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    /// `password is required`: the detail of the cloud's 9015 answer.
    public var description: String { "\(field) \(message)" }
}

/// Field access with errors that name the field.
struct BodyReader {
    let object: JSONObject
    /// Where the object is in the body (`devices[2].`), for errors.
    let path: String

    init(object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    init(_ json: JSONValue) throws(CloudBodyError) {
        guard case .object(let object) = json else { throw CloudBodyError(field: "the body", "must be a JSON object") }
        self.object = object
        self.path = ""
    }

    func name(_ key: String) -> String { path + key }

    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func optionalString(_ key: String) throws(CloudBodyError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw CloudBodyError(field: name(key), "must be a string") }
        return text
    }

    func string(_ key: String) throws(CloudBodyError) -> String {
        guard let text = try optionalString(key) else { throw CloudBodyError(field: name(key), "is required") }
        return text
    }

    /// Required bytes, as padded Base64 text (possibly empty).
    func base64(_ key: String) throws(CloudBodyError) -> [UInt8] {
        guard let bytes = [UInt8](tetherBase64: try string(key)) else { throw CloudBodyError(field: name(key), "must be padded Base64") }
        return bytes
    }

    /// Required bytes, as padded Base64 text, at most `maximum` of them.
    func base64(_ key: String, maximum: Int) throws(CloudBodyError) -> [UInt8] {
        let bytes = try base64(key)
        guard bytes.count <= maximum else { throw CloudBodyError(field: name(key), "must decode to at most \(maximum) bytes") }
        return bytes
    }

    /// A number (integer or not), nil when absent.
    func optionalNumber(_ key: String) throws(CloudBodyError) -> Double? {
        switch value(key) {
        case nil: return nil
        case .int(let number)?: return Double(number)
        case .double(let number)?: return number
        default: throw CloudBodyError(field: name(key), "must be a number")
        }
    }

    /// An array of objects, possibly empty, at most `maximum`.
    func list(_ key: String, maximum: Int) throws(CloudBodyError) -> [BodyReader] {
        guard let value = value(key), value != .array([]) else { return [] }
        return try objects(key, maximum: maximum)
    }

    /// A required, non-empty string: what a request's required field is.
    func text(_ key: String) throws(CloudBodyError) -> String {
        guard let text = try optionalString(key), !text.isEmpty else { throw CloudBodyError(field: name(key), "is required") }
        return text
    }

    /// An integer, or a string of one (a form post has only strings).
    func lenientInt(_ key: String) throws(CloudBodyError) -> Int64? {
        if case .string(let text)? = value(key) {
            guard let number = Int64(text) else { throw CloudBodyError(field: name(key), "must be an integer") }
            return number
        }
        return try optionalInt(key)
    }

    /// `{"devices": [{…}, …]}`: 1 to `maximum` objects.
    func objects(_ key: String, maximum: Int) throws(CloudBodyError) -> [BodyReader] {
        guard let value = value(key) else { throw CloudBodyError(field: name(key), "is required") }
        guard let items = value.arrayValue else { throw CloudBodyError(field: name(key), "must be an array") }
        guard !items.isEmpty, items.count <= maximum else { throw CloudBodyError(field: name(key), "must hold 1 to \(maximum) entries") }
        return try items.enumerated().map { index, item throws(CloudBodyError) in
            guard case .object(let object) = item else { throw CloudBodyError(field: name("\(key)[\(index)]"), "must be an object") }
            return BodyReader(object: object, path: name("\(key)[\(index)]."))
        }
    }

    func optionalInt(_ key: String) throws(CloudBodyError) -> Int64? {
        switch value(key) {
        case nil: return nil
        case .int(let number)?: return number
        case .double(let number)? where number.rounded() == number && abs(number) < 9e15: return Int64(number)
        default: throw CloudBodyError(field: name(key), "must be an integer")
        }
    }

    func int(_ key: String) throws(CloudBodyError) -> Int64 {
        guard let number = try optionalInt(key) else { throw CloudBodyError(field: name(key), "is required") }
        return number
    }

    func optionalBool(_ key: String) throws(CloudBodyError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw CloudBodyError(field: name(key), "must be true or false") }
        return flag
    }

    func optionalObject(_ key: String) throws(CloudBodyError) -> JSONObject? {
        guard let value = value(key) else { return nil }
        guard case .object(let found) = value else { throw CloudBodyError(field: name(key), "must be an object") }
        return found
    }

    func optionalStrings(_ key: String) throws(CloudBodyError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard let items = value.arrayValue else { throw CloudBodyError(field: name(key), "must be an array of strings") }
        return try items.enumerated().map { index, item throws(CloudBodyError) in
            guard let text = item.stringValue else { throw CloudBodyError(field: name("\(key)[\(index)]"), "must be a string") }
            return text
        }
    }
}

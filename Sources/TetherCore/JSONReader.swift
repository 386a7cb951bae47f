/// Reads a JSON document field by field and reports errors with the path of the field
/// (`entities[0].attrs[3].uint_spec.ratio`), so that a bad model file is easy to fix.
struct JSONReader {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String = "") {
        self.value = value
        self.path = path
    }

    func fail(_ message: String) -> TetherError {
        TetherError(.invalidModel, path.isEmpty ? message : "\(path): \(message)")
    }

    private func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func optional(_ key: String) throws(TetherError) -> JSONReader? {
        guard case .object(let object) = value else { throw fail("expected an object") }
        guard let found = object[key], found != .null else { return nil }
        return JSONReader(found, path: child(key))
    }

    func require(_ key: String) throws(TetherError) -> JSONReader {
        guard let found = try optional(key) else {
            throw TetherError(.invalidModel, "\(child(key)): missing")
        }
        return found
    }

    func string() throws(TetherError) -> String {
        guard case .string(let text) = value else { throw fail("expected text") }
        return text
    }

    func nonEmptyString() throws(TetherError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw fail("must not be empty") }
        return text
    }

    func number() throws(TetherError) -> Double {
        guard let number = value.numberValue, number.isFinite else { throw fail("expected a number") }
        return number
    }

    func int() throws(TetherError) -> Int {
        let number = try number()
        guard number.isIntegral, abs(number) <= Double(Int32.max) else { throw fail("expected an integer") }
        return Int(number)
    }

    func bool() throws(TetherError) -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .int(0), .string("false"), .string("0"): return false
        case .int(1), .string("true"), .string("1"): return true
        default: throw fail("expected true or false")
        }
    }

    func array() throws(TetherError) -> [JSONReader] {
        guard case .array(let items) = value else { throw fail("expected an array") }
        return items.enumerated().map { JSONReader($0.element, path: "\(path)[\($0.offset)]") }
    }

    func object() throws(TetherError) -> JSONObject {
        guard case .object(let object) = value else { throw fail("expected an object") }
        return object
    }
}

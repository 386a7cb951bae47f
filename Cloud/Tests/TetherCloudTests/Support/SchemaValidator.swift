import TetherCore

/// Checks a JSON value against the part of JSON Schema the cloud's document uses (`type`,
/// `properties`, `required`, `items`, `enum`, `minimum`, `maximum`, `nullable`, `$ref`). Every answer a test
/// receives goes through it, so the OpenAPI document is checked by every test.
struct SchemaValidator {
    let document: JSONValue

    func problems(_ value: JSONValue, against schema: JSONValue, at path: String = "$") -> [String] {
        if let reference = schema["$ref"]?.stringValue {
            let name = String(reference.split(separator: "/").last ?? "")
            guard let resolved = document["components"]?["schemas"]?[name] else { return ["\(path): unknown \(reference)"] }
            return problems(value, against: resolved, at: path)
        }
        var found: [String] = []
        if value == .null, schema["nullable"] == .bool(true) { return [] }
        if let type = schema["type"]?.stringValue, !Self.matches(value, type: type) {
            return ["\(path): expected \(type), got \(value.serialized())"]
        }
        if let allowed = schema["enum"]?.arrayValue, !allowed.contains(value) {
            found.append("\(path): \(value.serialized()) is not one of \(JSONValue.array(allowed).serialized())")
        }
        if case .int(let number) = value {
            if case .int(let minimum)? = schema["minimum"], number < minimum { found.append("\(path): below \(minimum)") }
            if case .int(let maximum)? = schema["maximum"], number > maximum { found.append("\(path): above \(maximum)") }
        }
        if case .object(let object) = value {
            for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                found.append("\(path): missing \(name)")
            }
            if let properties = schema["properties"]?.objectValue {
                for name in properties.keys {
                    guard let property = object[name], let propertySchema = properties[name] else { continue }
                    found += problems(property, against: propertySchema, at: "\(path).\(name)")
                }
            }
        }
        if case .array(let elements) = value, let items = schema["items"] {
            for (index, element) in elements.enumerated() {
                found += problems(element, against: items, at: "\(path)[\(index)]")
            }
        }
        return found
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("integer", .int): true
        case ("number", .int), ("number", .double): true
        default: false
        }
    }

    /// The documented schema of the answer to `method path` with `status`: the operation's
    /// own for its success status, the Error schema otherwise.
    func responseSchema(method: String, path: String, status: Int) -> (schema: JSONValue?, documented: Bool) {
        guard let paths = document["paths"]?.objectValue else { return (nil, false) }
        let requestPath = path.split(separator: "?").first.map(String.init) ?? path
        for template in paths.keys where Self.path(requestPath, matches: template) {
            guard let operation = paths[template]?[method.lowercased()] else { continue }
            let response = operation["responses"]?[String(status)] ?? operation["responses"]?["default"]
            return (response?["content"]?["application/json"]?["schema"], true)
        }
        return (nil, false)
    }

    static func path(_ path: String, matches template: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let templateParts = template.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == templateParts.count else { return false }
        return zip(parts, templateParts).allSatisfy { part, templatePart in
            templatePart.hasPrefix("{") ? !part.isEmpty : part == templatePart
        }
    }
}

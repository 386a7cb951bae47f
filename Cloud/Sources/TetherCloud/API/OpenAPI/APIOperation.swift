import HTTPTypes
import TetherCore

/// One documented endpoint: what the OpenAPI document says about it. Routes are registered
/// through ``DocumentedRouter``, so an endpoint cannot be served without being described.
struct APIOperation: Sendable {
    /// Which credentials the endpoint checks (gizwits-openapi.md §1, headers A, U, T, Auth).
    enum Security: Sendable {
        case none
        case app
        case appAndUser
        case appAndAppToken
        case appAndAuth
    }

    struct Parameter: Sendable {
        var name: String
        var location: String
        var schema: JSONValue
        var required: Bool
        var description: String
    }

    struct Success: Sendable {
        var status: Int
        var description: String
        var schema: JSONValue?
        var contentType: String

        static func ok(_ schema: JSONValue?, _ description: String = "OK") -> Success {
            Success(status: 200, description: description, schema: schema, contentType: "application/json")
        }

        static func created(_ schema: JSONValue?, _ description: String = "Created") -> Success {
            Success(status: 201, description: description, schema: schema, contentType: "application/json")
        }

        static func binary(_ status: Int, _ description: String) -> Success {
            Success(status: status, description: description, schema: .object(["type": "string", "format": "binary"]), contentType: "application/octet-stream")
        }

        static func text(_ status: Int, _ description: String) -> Success {
            Success(status: status, description: description, schema: .object(["type": "string"]), contentType: "text/plain")
        }
    }

    var method: HTTPRequest.Method
    /// The path in OpenAPI (and Hummingbird) syntax: `/app/bindings/{did}`.
    var path: String
    var summary: String
    var tag: String
    var security: Security
    var parameters: [Parameter] = []
    var body: JSONValue?
    /// Also accepts `application/x-www-form-urlencoded` (GAgent's registration).
    var acceptsForm = false
    var success: Success

}

extension APIOperation.Parameter {
    static func query(_ name: String, _ schema: JSONValue, required: Bool = false, _ description: String = "") -> Self {
        Self(name: name, location: "query", schema: schema, required: required, description: description)
    }

    static func header(_ name: String, _ schema: JSONValue, _ description: String) -> Self {
        Self(name: name, location: "header", schema: schema, required: true, description: description)
    }
}

/// JSON Schema building blocks for the document.
enum JSONSchema {
    static let string: JSONValue = ["type": "string"]
    static let integer: JSONValue = ["type": "integer", "format": "int64"]
    static let boolean: JSONValue = ["type": "boolean"]
    static let empty: JSONValue = ["type": "object"]

    static func string(_ description: String, maxLength: Int? = nil) -> JSONValue {
        var object: JSONObject = ["type": "string", "description": .string(description)]
        if let maxLength { object["maxLength"] = .int(Int64(maxLength)) }
        return .object(object)
    }

    static func integer(minimum: Int64? = nil, maximum: Int64? = nil) -> JSONValue {
        var object: JSONObject = ["type": "integer", "format": "int64"]
        if let minimum { object["minimum"] = .int(minimum) }
        if let maximum { object["maximum"] = .int(maximum) }
        return .object(object)
    }

    static func array(_ items: JSONValue, maxItems: Int? = nil) -> JSONValue {
        var object: JSONObject = ["type": "array", "items": items]
        if let maxItems { object["maxItems"] = .int(Int64(maxItems)) }
        return .object(object)
    }

    static func object(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = []) -> JSONValue {
        var props = JSONObject()
        for (name, schema) in properties { props[name] = schema }
        var object: JSONObject = ["type": "object", "properties": .object(props)]
        if !required.isEmpty { object["required"] = .array(required.map(JSONValue.string)) }
        return .object(object)
    }

    static func ref(_ name: String) -> JSONValue {
        ["$ref": .string("#/components/schemas/\(name)")]
    }
}

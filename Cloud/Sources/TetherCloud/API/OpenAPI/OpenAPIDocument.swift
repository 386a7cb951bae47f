import HTTPTypes
import TetherCore

/// The OpenAPI 3 document of everything a server serves, built from the operations its routes
/// registered, so it cannot fall behind them. Served at `GET /openapi.json`.
enum OpenAPIDocument {
    static func make(operations: [APIOperation], version: String) -> JSONValue {
        var paths = JSONObject()
        for operation in operations {
            var item = paths[operation.path]?.objectValue ?? JSONObject()
            item[operation.method.rawValue.lowercased()] = describe(operation)
            paths[operation.path] = .object(item)
        }
        var schemas = JSONObject()
        for (name, schema) in CloudSchemas.components { schemas[name] = schema }
        return .object([
            "openapi": "3.0.3",
            "info": .object([
                "title": "Tether cloud",
                "version": .string(version),
                "description":
                    "A Gizwits-compatible Open API: accounts, products, devices and bindings. Errors are {error_code, error_message, detail} with the Gizwits codes.",
            ]),
            "paths": .object(paths),
            "components": .object([
                "schemas": .object(schemas),
                "securitySchemes": .object([
                    "appId": apiKey("X-Gizwits-Application-Id", "The app id from `tether-cloud admin app create`."),
                    "userToken": apiKey("X-Gizwits-User-token", "A user token from registration or login."),
                    "appToken": apiKey("X-Gizwits-Application-Token", "An app token from POST /app/request_token."),
                    "appAuth": apiKey("X-Gizwits-Application-Auth", "Hex MD5 of appid + appsecret."),
                ]),
            ]),
        ])
    }

    private static func apiKey(_ header: String, _ description: String) -> JSONValue {
        .object(["type": "apiKey", "in": "header", "name": .string(header), "description": .string(description)])
    }

    private static func describe(_ operation: APIOperation) -> JSONValue {
        var object: JSONObject = [
            "summary": .string(operation.summary),
            "tags": [.string(operation.tag)],
            "operationId": .string(operationID(operation)),
        ]
        let security: [JSONValue] =
            switch operation.security {
            case .none: []
            case .app: [["appId": []]]
            case .appAndUser: [["appId": [], "userToken": []]]
            case .appAndAppToken: [["appId": [], "appToken": []]]
            case .appAndAuth: [["appId": [], "appAuth": []]]
            }
        object["security"] = .array(security)
        var parameters = operation.parameters.map { parameter -> JSONValue in
            var description: JSONObject = [
                "name": .string(parameter.name), "in": .string(parameter.location),
                "required": .bool(parameter.required), "schema": parameter.schema,
            ]
            if !parameter.description.isEmpty { description["description"] = .string(parameter.description) }
            return .object(description)
        }
        for name in pathParameters(operation.path) {
            parameters.append(["name": .string(name), "in": "path", "required": true, "schema": JSONSchema.string])
        }
        if !parameters.isEmpty { object["parameters"] = .array(parameters) }
        if let body = operation.body {
            var content: JSONObject = ["application/json": ["schema": body]]
            if operation.acceptsForm { content["application/x-www-form-urlencoded"] = ["schema": body] }
            object["requestBody"] = ["required": true, "content": .object(content)]
        }
        var success: JSONObject = ["description": .string(operation.success.description)]
        if let schema = operation.success.schema {
            success["content"] = .object([operation.success.contentType: ["schema": schema]])
        }
        object["responses"] = .object([
            String(operation.success.status): .object(success),
            "default": [
                "description": "An error with the Gizwits code (see GET /errors).",
                "content": ["application/json": ["schema": JSONSchema.ref("Error")]],
            ],
        ])
        return .object(object)
    }

    static func pathParameters(_ path: String) -> [String] {
        path.split(separator: "/").compactMap { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? String(segment.dropFirst().dropLast()) : nil
        }
    }

    private static func operationID(_ operation: APIOperation) -> String {
        let words = operation.path.split(separator: "/").map { $0.filter { $0.isLetter || $0.isNumber || $0 == "_" } }
        return ([operation.method.rawValue.lowercased()] + words).joined(separator: "_")
    }
}

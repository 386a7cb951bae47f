#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON document as a value, with objects that keep their keys in insertion order so that
/// what Tether prints (CLI output, exported models) reads in a sensible order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Parses a UTF-8 JSON document (RFC 8259, strictly; objects keep their document order).
    public static func parse(_ bytes: some Collection<UInt8>) throws(TetherError) -> JSONValue {
        let parsed: Result<JSONValue, JSONParser.Failure> =
            bytes.withContiguousStorageIfAvailable { buffer in Result { () throws(JSONParser.Failure) in try JSONParser.parse(buffer) } }
            ?? Array(bytes).withUnsafeBufferPointer { buffer in Result { () throws(JSONParser.Failure) in try JSONParser.parse(buffer) } }
        switch parsed {
        case .success(let value):
            return value
        case .failure(let failure):
            throw TetherError(.invalidArgument, "not a valid JSON document: \(failure.message) at byte \(failure.offset)")
        }
    }

    /// Parses a JSON document given as text; throws `TetherError.Code.invalidArgument` when it is
    /// not valid JSON.
    public static func parse(_ text: String) throws(TetherError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// The member `key` of an object; nil when it is missing or when the value is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The object, or nil when the value is not an object.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The elements, or nil when the value is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The text, or nil when the value is not a string (numbers are not converted).
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The value as a number, accepting integers, doubles and numeric strings (the Aliyun TSL
    /// writes its specs as strings).
    public var numberValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        case .string(let text): return Double(String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()))
        default: return nil
        }
    }

    /// Compact, or indented by two spaces when `pretty`.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// ``serialized(pretty:)`` as UTF-8 bytes, written directly (what goes on the wire).
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output, pretty: pretty, indent: 0)
        return output
    }

    private func write(to output: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value): output.append(contentsOf: Self.format(value).utf8)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            if values.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(indent + 1, to: &output) }
                value.write(to: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(indent, to: &output) }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(indent + 1, to: &output) }
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                object[key]!.write(to: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(indent, to: &output) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ indent: Int, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    private static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// UTF-8 passes through byte for byte; only `"`, `\` and control characters are escaped.
    private static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): output.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): output.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): output.append(contentsOf: "\\t".utf8)
            case 0..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// A JSON object that remembers the order in which keys were added.
public struct JSONObject: Hashable, Sendable, ExpressibleByDictionaryLiteral {
    /// The keys in the order they were first added; serialisation follows this order.
    public private(set) var keys: [String] = []
    private var storage: [String: JSONValue] = [:]

    /// An empty object.
    public init() {}

    /// An object whose keys keep the order in which the literal lists them.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements { self[key] = value }
    }

    /// Whether the object has no members.
    public var isEmpty: Bool { keys.isEmpty }
    /// The number of members.
    public var count: Int { keys.count }

    /// The member named `key`. Setting a new key appends it to ``keys``; setting nil removes it.
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.storage == rhs.storage }
    public func hash(into hasher: inout Hasher) { hasher.combine(storage) }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            let dictionary = try container.decode([String: JSONValue].self)
            var object = JSONObject()
            for key in dictionary.keys.sorted() { object[key] = dictionary[key] }
            self = .object(object)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let object):
            var dictionary: [String: JSONValue] = [:]
            for key in object.keys { dictionary[key] = object[key] }
            try container.encode(dictionary)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A string literal as `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal as `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A Boolean literal as `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array literal as `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal as an `.object` whose keys keep the order in which the literal lists them.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

/// A typed data-point value.
///
/// Enum data points carry the index of their label as `.int`; ``ThingModel/normalize(_:for:)``
/// also accepts the label as `.string`. Numbers with an integral step and offset are `.int`,
/// others `.double`.
public enum DataValue: Hashable, Sendable, CustomStringConvertible {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case binary([UInt8])

    public var description: String {
        switch self {
        case .bool(let value): return String(value)
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return "\"\(value)\""
        case .binary(let bytes): return "0x" + bytes.tetherHex
        }
    }

    /// The value as a JSON value: bytes become a lowercase hex string.
    public var jsonValue: JSONValue {
        switch self {
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .binary(let bytes): return .string(bytes.tetherHex)
        }
    }

    /// Reads a value from JSON as a client sent it, before normalisation against a model.
    public init?(json: JSONValue) {
        switch json {
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .null, .array, .object: return nil
        }
    }

    var typeName: String {
        switch self {
        case .bool: return "bool"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "text"
        case .binary: return "binary"
        }
    }
}

extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, two characters a byte, no separators.
    public var tetherHex: String {
        let digits: [Character] = Array("0123456789abcdef")
        var result = ""
        for byte in self {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }
}

extension Array where Element == UInt8 {
    /// Parses hexadecimal text; spaces, colons and a leading `0x` are ignored. Nil if not hex.
    public init?(tetherHex text: some StringProtocol) {
        var cleaned = Substring(text)
        if cleaned.hasPrefix("0x") || cleaned.hasPrefix("0X") { cleaned = cleaned.dropFirst(2) }
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(cleaned.utf8.count)
        for scalar in cleaned.utf8 {
            switch scalar {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(scalar - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(scalar - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(scalar - UInt8(ascii: "A") + 10)
            case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n"), UInt8(ascii: "\t"): continue
            default: return nil
            }
        }
        guard nibbles.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nibbles.count / 2)
        var index = 0
        while index < nibbles.count {
            bytes.append(nibbles[index] << 4 | nibbles[index + 1])
            index += 2
        }
        self = bytes
    }
}

/// Literals, so that writes read like the data they carry: `["LED_OnOff": true, "LED_Color": "Pink", "LED_R": 10]`.
extension DataValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    /// A Boolean literal as `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal as `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A floating-point literal as `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string literal as `.string`: text, or an enum label that normalisation turns into its index.
    public init(stringLiteral value: String) { self = .string(value) }
}

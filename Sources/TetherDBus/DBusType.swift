public import TetherCore

/// One complete D-Bus type, as a signature spells it (`s`, `a{sv}`, `(oa{sa{sv}})`, …).
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD, variant
    case array(DBusType)
    case structure([DBusType])
    /// Only as the element of an array (`a{…}`), with a basic key.
    case dictionaryEntry(key: DBusType, value: DBusType)

    /// The signature of this one type.
    public var description: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.description
        case .structure(let members): "(" + members.map(\.description).joined() + ")"
        case .dictionaryEntry(let key, let value): "{" + key.description + value.description + "}"
        }
    }

    /// The boundary a value of this type starts on, counted from the start of the message.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array: 4
        case .int64, .uint64, .double, .structure, .dictionaryEntry: 8
        }
    }

    /// Whether this is a basic type (one that may be a dictionary key).
    var isBasic: Bool {
        switch self {
        case .array, .structure, .dictionaryEntry, .variant: false
        default: true
        }
    }

    /// `a{sv}`: the property maps of `org.freedesktop.DBus.Properties` and BlueZ's options.
    public static let properties: DBusType = .array(.dictionaryEntry(key: .string, value: .variant))
    /// `ay`: raw bytes (a characteristic's value, manufacturer data).
    public static let bytes: DBusType = .array(.byte)
}

/// A sequence of complete types: a message body's or a variant's signature.
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible {
    /// The types in order.
    public let types: [DBusType]

    /// The D-Bus limits: a signature holds at most 255 bytes, and values nest at most 32 arrays
    /// and 32 structures deep.
    static let maximumLength = 255
    static let maximumNesting = 32

    public init(_ types: [DBusType]) {
        self.types = types
    }

    /// Reads a signature's text, refusing what D-Bus refuses (unknown codes, unclosed or empty
    /// structures, a dictionary entry outside an array or with a non-basic key, over 255 bytes,
    /// nesting over 32).
    public init(_ text: String) throws(TetherError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw TetherError(.malformedFrame, "a D-Bus signature is longer than \(Self.maximumLength) bytes")
        }
        var parser = SignatureParser(bytes: bytes)
        var types: [DBusType] = []
        while parser.index < bytes.count {
            types.append(try parser.completeType(arrays: 0, structures: 0))
        }
        self.types = types
    }

    public var description: String { types.map(\.description).joined() }
}

private struct SignatureParser {
    let bytes: [UInt8]
    var index = 0

    mutating func completeType(arrays: Int, structures: Int) throws(TetherError) -> DBusType {
        guard index < bytes.count else { throw Self.error("ends inside a type") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrays < DBusSignature.maximumNesting else { throw Self.error("nests arrays more than 32 deep") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let key = try completeType(arrays: arrays + 1, structures: structures + 1)
                guard key.isBasic else { throw Self.error("has a dictionary key that is not a basic type") }
                let value = try completeType(arrays: arrays + 1, structures: structures + 1)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw Self.error("has a dictionary entry without exactly one key and one value")
                }
                index += 1
                return .array(.dictionaryEntry(key: key, value: value))
            }
            return .array(try completeType(arrays: arrays + 1, structures: structures))
        case UInt8(ascii: "("):
            guard structures < DBusSignature.maximumNesting else { throw Self.error("nests structures more than 32 deep") }
            var members: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                members.append(try completeType(arrays: arrays, structures: structures + 1))
            }
            guard index < bytes.count else { throw Self.error("has an unclosed structure") }
            index += 1
            guard !members.isEmpty else { throw Self.error("has an empty structure") }
            return .structure(members)
        default:
            throw Self.error("has an unexpected character (byte \(code))")
        }
    }

    static func error(_ what: String) -> TetherError {
        TetherError(.malformedFrame, "a D-Bus signature \(what)")
    }
}

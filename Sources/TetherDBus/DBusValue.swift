/// A D-Bus value with its type. Arrays name their element type, so that an empty one still
/// has a signature. Only the cases that hold one value directly are boxed: an `ay` of a
/// notification is one array of inline bytes, not an allocation per byte.
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(DBusSignature)
    /// An index into the message's file descriptors (never used by Tether: no descriptors are
    /// negotiated, so a peer cannot send any).
    case unixFD(UInt32)
    case array(DBusType, [DBusValue])
    case structure([DBusValue])
    indirect case dictionaryEntry(DBusValue, DBusValue)
    indirect case variant(DBusValue)

    /// The value's type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .structure(let members): .structure(members.map(\.type))
        case .dictionaryEntry(let key, let value): .dictionaryEntry(key: key.type, value: value.type)
        case .variant: .variant
        }
    }
}

extension DBusValue {
    /// `ay` from bytes.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(.byte, bytes.map(DBusValue.byte))
    }

    /// `a{sv}` from a map of properties or options.
    public static func properties(_ properties: [String: DBusValue]) -> DBusValue {
        .array(
            .dictionaryEntry(key: .string, value: .variant),
            properties.sorted { $0.key < $1.key }.map { .dictionaryEntry(.string($0.key), .variant($0.value)) })
    }

    /// `as` from strings.
    public static func strings(_ strings: [String]) -> DBusValue {
        .array(.string, strings.map(DBusValue.string))
    }

    /// The value inside a variant (nested variants unwrapped), or the value itself.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var stringValue: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text): text
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type, when its value fits an `Int64`.
    public var integerValue: Int64? {
        switch unwrapped {
        case .byte(let value): Int64(value)
        case .int16(let value): Int64(value)
        case .uint16(let value): Int64(value)
        case .int32(let value): Int64(value)
        case .uint32(let value): Int64(value)
        case .int64(let value): value
        case .uint64(let value): Int64(exactly: value)
        default: nil
        }
    }

    public var arrayValue: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// `ay` as bytes.
    public var bytesValue: [UInt8]? {
        guard case .array(.byte, let elements) = unwrapped else { return nil }
        return elements.map { if case .byte(let byte) = $0 { byte } else { 0 } }
    }

    /// A dictionary (`a{…}`) by key; later duplicates win.
    public var dictionaryValue: [DBusValue: DBusValue]? {
        guard case .array(.dictionaryEntry, let entries) = unwrapped else { return nil }
        var result: [DBusValue: DBusValue] = [:]
        for case .dictionaryEntry(let key, let value) in entries { result[key] = value }
        return result
    }

    /// A string-keyed dictionary (`a{sv}`, `a{sa{sv}}`, …), with variants unwrapped.
    public var propertiesValue: [String: DBusValue]? {
        guard let dictionary = dictionaryValue else { return nil }
        var result: [String: DBusValue] = [:]
        for (key, value) in dictionary {
            guard let name = key.stringValue else { return nil }
            result[name] = value.unwrapped
        }
        return result
    }

    public var structureValue: [DBusValue]? {
        if case .structure(let members) = unwrapped { return members }
        return nil
    }
}

/// The client id of an Alink CONNECT: a prefix, then `|key=value,key=value|` extension fields
/// (`securemode`, `signmethod`, `timestamp`, `_ss`, `authType`, `random`, …).
///
/// `a1PK000001&dev01|securemode=3,signmethod=hmacsha1,_ss=1,timestamp=1795318066|`
public struct AlinkClientID: Hashable, Sendable, CustomStringConvertible {
    /// What comes before the first `|`: `{pk}&{dn}` for a device, `{dn}.{pk}` for dynamic
    /// registration. This part, not the whole id, is what the device signs.
    public var prefix: String
    /// The extension fields in the order they were written.
    public var fields: [(key: String, value: String)]

    /// A client id from its parts, written in the given order; nothing is checked.
    public init(prefix: String, fields: [(key: String, value: String)] = []) {
        self.prefix = prefix
        self.fields = fields
    }

    /// Reads a client id; nil when the extension part is not `|k=v,…|`. A client id without
    /// any `|` is a bare prefix.
    public init?(parsing text: String) {
        guard let bar = text.firstIndex(of: "|") else {
            self.init(prefix: text)
            return
        }
        let rest = text[text.index(after: bar)...]
        guard rest.last == "|" else { return nil }
        var fields: [(key: String, value: String)] = []
        for field in rest.dropLast().split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = field.firstIndex(of: "="), equals != field.startIndex else { return nil }
            let value = field[field.index(after: equals)...]
            guard !value.contains("|") else { return nil }
            fields.append((String(field[..<equals]), String(value)))
        }
        self.init(prefix: String(text[..<bar]), fields: fields)
    }

    /// The value of an extension field, nil when absent; when a key repeats, the last one counts.
    public subscript(key: String) -> String? {
        fields.last(where: { $0.key == key })?.value
    }

    /// `securemode`: 2 TLS, 3 plain TCP, -2 token reconnect after whitelist-free registration.
    public var secureMode: Int? { self["securemode"].flatMap { Int($0) } }
    /// `signmethod` (in any case); nil when absent or not an HMAC Tether knows.
    public var signMethod: AlinkSignMethod? { self["signmethod"].flatMap { AlinkSignMethod(rawValue: $0.lowercased()) } }
    /// `timestamp` as written; when present it is part of what the device signs.
    public var timestamp: String? { self["timestamp"] }
    /// `_ss=1`: the platform subscribes the device's downstream topics on its behalf.
    public var wantsServerSideSubscriptions: Bool { self["_ss"] == "1" }
    /// `register` or `regnwl` for dynamic registration, `connwl` for a token reconnect.
    public var authType: String? { self["authType"] }

    public var description: String {
        guard !fields.isEmpty else { return prefix }
        return prefix + "|" + fields.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "|"
    }

    public static func == (lhs: AlinkClientID, rhs: AlinkClientID) -> Bool { lhs.description == rhs.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

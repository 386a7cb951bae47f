/// An `http://` or `https://` URL as the SDK's small HTTP clients need it: scheme, host, port and
/// the rest (path and query) as sent in the request line.
public struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    /// `https` (TLS) rather than `http`.
    public var isSecure: Bool
    /// The host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The TCP port (80 or 443 unless given).
    public var port: Int
    /// Everything from the first `/` after the host: path and query; "" for none.
    public var target: String

    /// Reads `http://HOST[:PORT][/PATH][?QUERY]` or `https://…`; `invalidArgument` otherwise.
    public init(parsing url: String) throws(TetherError) {
        var rest: Substring
        if url.hasPrefix("https://") {
            isSecure = true
            rest = url.dropFirst("https://".count)
        } else if url.hasPrefix("http://") {
            isSecure = false
            rest = url.dropFirst("http://".count)
        } else {
            throw TetherError(.invalidArgument, "a URL is http://HOST[:PORT] or https://HOST[:PORT] (got \(url))")
        }
        target = ""
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
            target = String(rest[slash...])
            if target.hasPrefix("?") { target = "/" + target }
            rest = rest[..<slash]
        }
        var host = String(rest)
        var port: Int?
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(number) else {
                throw TetherError(.invalidArgument, "the port of \(url) is not a number from 1 to 65535")
            }
            port = number
            host = String(rest[..<colon])
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "@" }) else { throw TetherError(.invalidArgument, "\(url) names no host") }
        self.host = host
        self.port = port ?? (isSecure ? 443 : 80)
    }

    /// The `Host` header's value: the port only when it is not the scheme's.
    public var hostHeader: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? shownHost : "\(shownHost):\(port)"
    }

    /// Whether the host is an address rather than a name (no TLS server name then).
    public var hostIsAddress: Bool { host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil } }

    public var description: String { "\(isSecure ? "https" : "http")://\(hostHeader)\(target)" }
}

extension String {
    /// Percent-encoded for a URL's query or path segment: everything but letters, digits and
    /// `-_.~` (RFC 3986's unreserved characters) as `%XX` of its UTF-8 bytes.
    public var tetherPercentEncoded: String {
        var result = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + [byte].tetherHex.uppercased()
            }
        }
        return result
    }
}

public import TetherCore

/// Where a Tether cloud (or any Gizwits Open API server) is: `http://host:port` or
/// `https://host[:port]`, with an optional path prefix.
public struct CloudEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// `https` (TLS) rather than `http`.
    public var isSecure: Bool
    /// The host name or address.
    public var host: String
    /// The TCP port (80 or 443 unless given).
    public var port: Int
    /// Prefix of every path, without a trailing slash ("" for none).
    public var basePath: String

    /// An endpoint from its parts; the port defaults to the scheme's.
    public init(isSecure: Bool = false, host: String, port: Int? = nil, basePath: String = "") {
        self.isSecure = isSecure
        self.host = host
        self.port = port ?? (isSecure ? 443 : 80)
        self.basePath = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
    }

    /// Reads `http://host[:port][/prefix]` or `https://…`.
    public init(url: String) throws(TetherError) {
        let secure: Bool
        var rest: Substring
        if url.hasPrefix("https://") {
            secure = true
            rest = url.dropFirst("https://".count)
        } else if url.hasPrefix("http://") {
            secure = false
            rest = url.dropFirst("http://".count)
        } else {
            throw TetherError(.invalidArgument, "a cloud address is http://HOST[:PORT] or https://HOST[:PORT] (got \(url))")
        }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
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
        guard !host.isEmpty else { throw TetherError(.invalidArgument, "\(url) names no host") }
        self.init(isSecure: secure, host: host, port: port, basePath: path)
    }

    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = isSecure ? 443 : 80
        return "\(isSecure ? "https" : "http")://\(shownHost)\(port == defaultPort ? "" : ":\(port)")\(basePath)"
    }
}

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
        let parsed = try HTTPURL(parsing: url)
        guard !parsed.target.contains("?") else { throw TetherError(.invalidArgument, "a cloud address has no query (got \(url))") }
        self.init(isSecure: parsed.isSecure, host: parsed.host, port: parsed.port, basePath: parsed.target)
    }

    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = isSecure ? 443 : 80
        return "\(isSecure ? "https" : "http")://\(shownHost)\(port == defaultPort ? "" : ":\(port)")\(basePath)"
    }
}

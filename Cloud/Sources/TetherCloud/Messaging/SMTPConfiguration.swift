import Foundation

/// Where e-mail goes when it is not kept in the outbox: an SMTP server, given as
/// `smtp://[USER:PASSWORD@]HOST[:PORT]` (STARTTLS when the server offers it; `?starttls=require`
/// refuses to send in clear), or `smtps://…` (TLS from the first byte, port 465).
public struct SMTPConfiguration: Sendable, Equatable {
    public enum Security: Sendable, Equatable {
        /// STARTTLS if the server offers it, clear text otherwise.
        case opportunisticSTARTTLS
        /// STARTTLS or fail.
        case requireSTARTTLS
        /// TLS from the start (SMTPS).
        case implicitTLS
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// The sender address, `From:` and `MAIL FROM`.
    public var from: String
    /// PEM file of extra trusted certificate authorities (a private mail server's).
    public var trustRootsFile: String?
    public var timeout: Duration = .seconds(20)

    public init(url text: String, from: String, trustRootsFile: String? = nil) throws(CloudAPIError) {
        guard let url = URLComponents(string: text), let scheme = url.scheme, let host = url.host, !host.isEmpty else {
            throw .formInvalid(detail: "expected smtp://[USER:PASSWORD@]HOST[:PORT] or smtps://…")
        }
        switch scheme {
        case "smtp":
            let mode = url.queryItems?.first { $0.name == "starttls" }?.value
            security = mode == "require" ? .requireSTARTTLS : .opportunisticSTARTTLS
            port = url.port ?? 25
        case "smtps":
            security = .implicitTLS
            port = url.port ?? 465
        default:
            throw .formInvalid(detail: "the SMTP URL's scheme must be smtp or smtps")
        }
        guard from.contains("@"), !from.unicodeScalars.contains(where: { "\r\n<>".unicodeScalars.contains($0) }) else {
            throw .formInvalid(detail: "the sender address is not an e-mail address")
        }
        self.host = host
        self.username = url.user?.removingPercentEncoding
        self.password = url.password?.removingPercentEncoding
        self.from = from
        self.trustRootsFile = trustRootsFile
    }
}

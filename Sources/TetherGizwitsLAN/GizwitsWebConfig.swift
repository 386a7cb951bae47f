public import TetherCore

/// GAgent's browser-style SoftAP onboarding (`shared/reference/gizwits-lan.md` §10.1):
/// `GET /web_config.cgi?ssid=<ssid>&pass=<password>` on port 80 of the device's access point.
/// The firmware does no percent-decoding: the SSID ends at the first `&`, the password at the
/// first space, and `ssid=` comes before `pass=`. Tether's extension adds `&token=<pairing token>`
/// after the password (firmware reads no further than `pass=`).
public struct GizwitsWebConfig: Sendable, Hashable, CustomStringConvertible {
    public static let path = "/web_config.cgi"
    /// GAgent's buffers (`SSID_LEN_MAX`, `WIFIKEY_LEN_MAX`); a token is 32 hex digits.
    public static let maximumSSIDLength = 32
    public static let maximumPasswordLength = 32
    public static let maximumTokenLength = 128

    public var ssid: String
    /// A secret: the description leaves it out.
    public var password: String
    /// A secret too.
    public var pairingToken: String?

    public init(ssid: String, password: String, pairingToken: String? = nil) {
        self.ssid = ssid
        self.password = password
        self.pairingToken = pairingToken
    }

    public var description: String { "GizwitsWebConfig(ssid: \(ssid), password: <redacted>, token: \(pairingToken == nil ? "none" : "<redacted>"))" }

    /// Characters that survive the firmware's parsing: printable ASCII without space, `&`, `#`,
    /// `%`, `+` and `?` (which a browser or the firmware would read as something else).
    public static func isCarried(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in (0x21...0x7E).contains(byte) && !"&#%+?".utf8.contains(byte) }
    }

    /// The request target the app sends.
    ///
    /// - Throws: `invalidArgument` for an empty or too long SSID, a too long password, or a
    ///   character the firmware cannot carry (it does no percent-decoding).
    public func target() throws(TetherError) -> String {
        guard (1...Self.maximumSSIDLength).contains(ssid.utf8.count), password.utf8.count <= Self.maximumPasswordLength else {
            throw TetherError(.invalidArgument, "web_config.cgi takes an SSID of 1 to 32 bytes and a password of at most 32")
        }
        guard Self.isCarried(ssid), Self.isCarried(password), pairingToken.map(Self.isCarried) ?? true else {
            throw TetherError(
                .invalidArgument, "web_config.cgi carries printable ASCII without spaces, &, #, %, + or ? (GAgent does no percent-decoding): use 0x0001")
        }
        var target = "\(Self.path)?ssid=\(ssid)&pass=\(password)"
        if let pairingToken { target += "&token=\(pairingToken)" }
        return target
    }

    /// Reads a request target as the firmware does; nil for another path or a query without
    /// `ssid=` before `pass=` (the firmware answers those with its form).
    public init?(target: String) {
        guard target.utf8.count <= 1024, target.hasPrefix(Self.path + "?") else { return nil }
        let query = target.dropFirst(Self.path.count + 1)
        guard let ssidStart = query.firstRange(of: "ssid=")?.upperBound else { return nil }
        let ssid = query[ssidStart...].prefix { $0 != "&" }
        // After the SSID's end: an SSID may itself contain "pass=".
        guard let passStart = query[ssid.endIndex...].firstRange(of: "&pass=")?.upperBound else { return nil }
        let afterPass = query[passStart...]
        let password = afterPass.prefix { $0 != " " && $0 != "&" }
        var token: String?
        if let tokenStart = afterPass.firstRange(of: "&token=")?.upperBound {
            let value = afterPass[tokenStart...].prefix { $0 != " " && $0 != "&" }
            if !value.isEmpty { token = String(value) }
        }
        guard !ssid.isEmpty, ssid.utf8.count <= Self.maximumSSIDLength, password.utf8.count <= Self.maximumPasswordLength,
            (token?.utf8.count ?? 0) <= Self.maximumTokenLength
        else { return nil }
        self.init(ssid: String(ssid), password: String(password), pairingToken: token)
    }
}

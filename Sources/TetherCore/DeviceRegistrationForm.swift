/// The body of `POST /dev/devices`, the registration a device (or its maker's provisioning
/// line) sends to a Tether cloud: GAgent's form (`mac`, `product_key`, `passcode`) with a
/// signature that proves the sender holds the product's secret or the device's own.
///
/// `sign` is the lower-case hex HMAC-SHA256, keyed with that secret, of
/// `"auth" + auth + "mac" + mac + "passcode" + passcode + "product_key" + productKey + "timestamp" + timestamp`
/// where `mac` is 12 lower-case hex digits and `passcode` is empty when the device lets the
/// cloud choose one. `TetherAlink` computes it (`signed(with:)`).
public struct DeviceRegistrationForm: Sendable, Hashable {
    /// Whose secret signs the form.
    public enum Authority: String, Sendable, Hashable, CaseIterable {
        /// The product secret every unit carries: registers a new device, or changes the
        /// passcode of one that never connected.
        case product
        /// The device's own secret: changes its passcode at any time (after a factory reset).
        case device
    }

    public var productKey: String
    /// 12 lower-case hex digits.
    public var mac: String
    /// The LAN passcode the device wants; nil lets the cloud choose one.
    public var passcode: String?
    public var authority: Authority
    /// Unix seconds when the form was signed.
    public var timestamp: Int64
    /// The signature; empty until signed.
    public var sign: String

    /// Nil when `mac` is not a MAC address (``MACAddress/hexDigits(_:)``).
    public init?(productKey: String, mac: String, passcode: String? = nil, authority: Authority = .product, timestamp: Int64, sign: String = "") {
        guard let mac = MACAddress.hexDigits(mac) else { return nil }
        self.productKey = productKey
        self.mac = mac
        self.passcode = passcode
        self.authority = authority
        self.timestamp = timestamp
        self.sign = sign
    }

    /// What the signature covers.
    public var signingContent: String {
        Self.signingContent(authority: authority.rawValue, mac: mac, passcode: passcode ?? "", productKey: productKey, timestamp: String(timestamp))
    }

    /// The content for fields as they arrived, so that a server checks exactly what was sent.
    public static func signingContent(authority: String, mac: String, passcode: String, productKey: String, timestamp: String) -> String {
        "auth" + authority + "mac" + mac + "passcode" + passcode + "product_key" + productKey + "timestamp" + timestamp
    }

    /// `application/x-www-form-urlencoded`, as GAgent posts it. Every value is a letter, digit
    /// or the product key's own characters, so nothing needs escaping beyond what is done here.
    public var formEncoded: String {
        var fields: [(String, String)] = [("mac", mac), ("product_key", productKey)]
        if let passcode { fields.append(("passcode", passcode)) }
        fields += [("auth", authority.rawValue), ("timestamp", String(timestamp)), ("sign", sign)]
        return fields.map { "\($0.0)=\(Self.escape($0.1))" }.joined(separator: "&")
    }

    private static func escape(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 0x80, scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) || "-_.~".unicodeScalars.contains(scalar) {
                output.unicodeScalars.append(scalar)
            } else {
                output += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return output
    }
}

/// What the cloud answers a registration: the device's id, its passcode (the one sent, or the
/// one chosen), and its own secret when a product-signed registration created it or it never
/// connected (the secret it signs MQTT connections and later registrations with).
public struct DeviceRegistrationAnswer: Sendable, Hashable {
    public var did: String
    public var passcode: String?
    public var deviceSecret: String?

    public init(did: String, passcode: String? = nil, deviceSecret: String? = nil) {
        self.did = did
        self.passcode = passcode
        self.deviceSecret = deviceSecret
    }

    /// `did=…[&passcode=…][&device_secret=…]`, the form GAgent reads (`did=` first).
    public var formEncoded: String {
        var text = "did=\(did)"
        if let passcode { text += "&passcode=\(passcode)" }
        if let deviceSecret { text += "&device_secret=\(deviceSecret)" }
        return text
    }

    /// Reads the form answer; nil without a did.
    public init?(formEncoded text: String) {
        var fields: [Substring: Substring] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            fields[parts[0]] = parts[1]
        }
        guard let did = fields["did"], !did.isEmpty else { return nil }
        self.init(did: String(did), passcode: fields["passcode"].map(String.init), deviceSecret: fields["device_secret"].map(String.init))
    }
}

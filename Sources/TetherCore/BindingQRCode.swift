/// What a device's binding QR code carries: enough for an app to bind a device it cannot
/// discover (GPRS, Bluetooth, another network) by MAC, product key and product secret, the
/// Gizwits SDK's `bindRemoteDevice`.
///
/// The text is `tether://bind?product_key=PK&mac=MAC&product_secret=PS`; the bare query
/// (`product_key=…&mac=…&product_secret=…`) is read too, so a code printed by other tools works.
///
/// ```swift
/// let code = try BindingQRCode(text: scanned)
/// let device = try await client.bind(code)
/// ```
public struct BindingQRCode: Hashable, Sendable, CustomStringConvertible {
    /// The product key of the device's product.
    public var productKey: String
    /// The device's MAC address, as 12 lowercase hex digits.
    public var mac: String
    /// The product secret the cloud asks for to bind by MAC; ``description`` leaves it out.
    public var productSecret: String

    /// Builds a code from its parts, accepting a MAC in any case with `:` or `-` separators. Throws
    /// `TetherError.Code.invalidArgument` when the MAC is not 12 hex digits or a key is empty.
    public init(productKey: String, mac: String, productSecret: String) throws(TetherError) {
        guard let digits = MACAddress.hexDigits(mac) else {
            throw TetherError(.invalidArgument, "a binding QR code's MAC is 12 hex digits, not \"\(mac)\"")
        }
        guard !productKey.isEmpty, !productSecret.isEmpty else {
            throw TetherError(.invalidArgument, "a binding QR code needs a product key and a product secret")
        }
        self.productKey = productKey
        self.mac = digits
        self.productSecret = productSecret
    }

    /// Reads the text of a scanned code.
    public init(text: String) throws(TetherError) {
        var query = text.drop(while: \.isWhitespace)
        while query.last?.isWhitespace == true { query.removeLast() }
        if let mark = query.firstIndex(of: "?") {
            guard query.hasPrefix("tether://bind") else {
                throw TetherError(.invalidArgument, "not a Tether binding QR code: \(Self.redacted(text))")
            }
            query = query[query.index(after: mark)...]
        }
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            fields[String(parts[0])] = Self.percentDecoded(parts[1])
        }
        guard let productKey = fields["product_key"], let mac = fields["mac"], let secret = fields["product_secret"] else {
            throw TetherError(.invalidArgument, "a binding QR code carries product_key, mac and product_secret: \(Self.redacted(text))")
        }
        try self.init(productKey: productKey, mac: mac, productSecret: secret)
    }

    /// The text to put in the QR code.
    public var text: String {
        "tether://bind?product_key=\(Self.percentEncoded(productKey))&mac=\(mac)&product_secret=\(Self.percentEncoded(productSecret))"
    }

    /// Without the secret, for logs and messages.
    public var description: String { "BindingQRCode(product_key: \(productKey), mac: \(mac))" }

    /// The text with every field whose name mentions a secret (however it is encoded) cut out.
    private static func redacted(_ text: String) -> String {
        text.split(separator: "&").map { field in
            let name = field.split(separator: "=", maxSplits: 1).first.map { percentDecoded($0) } ?? ""
            return name.lowercased().contains("secret") ? "…" : String(field)
        }.joined(separator: "&")
    }

    private static func percentEncoded(_ text: String) -> String { text.tetherPercentEncoded }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex), high < utf8.endIndex,
                let low = utf8.index(high, offsetBy: 1, limitedBy: utf8.endIndex), low < utf8.endIndex,
                let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = utf8.index(after: low)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

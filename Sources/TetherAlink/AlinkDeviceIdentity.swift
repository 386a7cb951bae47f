public import TetherCore

/// A device as Alink names it: the product key and the device name within that product.
public struct AlinkDeviceIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The product the device belongs to (1 to 64 characters, checked by the initializers).
    public var productKey: String
    /// The device's name, unique within its product (1 to 64 characters, checked by the initializers).
    public var deviceName: String

    /// Checks both names: 1 to 64 characters from letters, digits and `-_@.:`, so that they can
    /// never break a topic (`/`, `+`, `#`) or the client id and user name (`&`, `|`, `,`, `=`).
    public init(productKey: String, deviceName: String) throws(TetherError) {
        try Self.validate(productKey, what: "product key")
        try Self.validate(deviceName, what: "device name")
        self.productKey = productKey
        self.deviceName = deviceName
    }

    /// `{pk}&{dn}`, the client id prefix the device signs.
    public var clientIDPrefix: String { "\(productKey)&\(deviceName)" }

    /// `{dn}&{pk}`, the MQTT user name.
    public var username: String { "\(deviceName)&\(productKey)" }

    public var description: String { "\(productKey)/\(deviceName)" }

    /// Reads the MQTT user name `{dn}&{pk}`.
    public init(username: String) throws(TetherError) {
        let parts = username.split(separator: "&", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw TetherError(.invalidArgument, "an Alink user name is DEVICENAME&PRODUCTKEY")
        }
        try self.init(productKey: String(parts[1]), deviceName: String(parts[0]))
    }

    static func isNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: ":"): return true
        default: return false
        }
    }

    private static func validate(_ name: String, what: String) throws(TetherError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(isNameCharacter) else {
            throw TetherError(.invalidArgument, "a \(what) is 1 to 64 characters from letters, digits and -_@.: (got \"\(name.prefix(80))\")")
        }
    }
}

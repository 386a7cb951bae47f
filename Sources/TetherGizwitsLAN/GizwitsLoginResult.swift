/// The byte a device answers a login with (`0x0009`): GAgent's `00` success and `01` failure,
/// and Tether's reasons for refusing a grant (``LANGrant``), which older apps read as failures.
public struct GizwitsLoginResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = Self(rawValue: 0)
    /// A wrong passcode (GAgent's only failure).
    public static let refused = Self(rawValue: 1)
    /// Tether: the grant's expiry has passed; the app asks the cloud for a new one.
    public static let grantExpired = Self(rawValue: 2)
    /// Tether: the grant is unreadable, signed by a key the device does not trust, or for
    /// another device.
    public static let grantInvalid = Self(rawValue: 3)
    /// Tether: the device takes only grants outside its binding window (it is activated with a
    /// cloud); a passcode alone no longer logs in.
    public static let grantRequired = Self(rawValue: 4)

    public var isSuccess: Bool { self == .success }

    public var description: String {
        switch self {
        case .success: "success"
        case .refused: "refused"
        case .grantExpired: "grantExpired"
        case .grantInvalid: "grantInvalid"
        case .grantRequired: "grantRequired"
        default: "failure(\(rawValue))"
        }
    }
}

/// Why a link ended.
public enum BluetoothDisconnection: Hashable, Sendable, CustomStringConvertible {
    /// The app ended it (the scope of `withConnection` ended, or it called disconnect).
    case byApp
    /// The peripheral ended it.
    case byDevice
    /// The radio link was lost (out of range, supervision timeout).
    case linkLost
    /// Connecting or discovering took longer than allowed.
    case timeout
    /// Pairing or the profile's login failed.
    case authenticationFailed
    /// The stack gave a reason Tether does not map.
    case other(String)

    public var description: String {
        switch self {
        case .byApp: "disconnected by the app"
        case .byDevice: "disconnected by the device"
        case .linkLost: "the link was lost"
        case .timeout: "the connection timed out"
        case .authenticationFailed: "authentication failed"
        case .other(let reason): "disconnected: \(reason)"
        }
    }
}

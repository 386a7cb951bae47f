public import TetherCore

/// Why an LW003-V3 is about to drop the link, notified on `AA01` as `ED 02 01 01 <reason>` just
/// before it disconnects (ble-profiles.md A3). Unknown reasons are kept.
public struct LW003DisconnectReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `01`: no password was entered within 1 minute of connecting.
    public static let loginTimeout = Self(rawValue: 0x01)
    /// `02`: no data traffic for 3 minutes (read something every 30 s to keep a session).
    public static let idleTimeout = Self(rawValue: 0x02)
    /// `03`: the device went down on a command: power off (`0x01`) or restart (`0x02`). The vendor
    /// guide says power off, both vendor apps show "reboot".
    public static let shutDown = Self(rawValue: 0x03)
    /// `04`: the device was reset to factory settings.
    public static let factoryReset = Self(rawValue: 0x04)
    /// `05`: the password was changed; reconnect with the new one.
    public static let passwordChanged = Self(rawValue: 0x05)

    /// Decodes an `AA01` notification.
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless it is the 5 bytes `ED 02 01 01 <reason>`.
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.count == 5, bytes[0..<4] == [0xED, 0x02, 0x01, 0x01] else {
            throw TetherError(
                .malformedFrame, "an LW003 disconnect reason is ED 02 01 01 <reason>, not \(BluetoothProfileBytes.hexPrefix(bytes)) (\(bytes.count) bytes)")
        }
        self.init(rawValue: bytes[4])
    }

    /// The 5 bytes a device notifies on `AA01`.
    public var bytes: [UInt8] { [0xED, 0x02, 0x01, 0x01, rawValue] }

    /// `loginTimeout`, `idleTimeout`, `shutDown`, `factoryReset`, `passwordChanged`, or
    /// `reason 0x..` for a value the profile does not name.
    public var description: String {
        switch rawValue {
        case 0x01: "loginTimeout"
        case 0x02: "idleTimeout"
        case 0x03: "shutDown"
        case 0x04: "factoryReset"
        case 0x05: "passwordChanged"
        default: "reason 0x" + [rawValue].tetherHex.uppercased()
        }
    }
}

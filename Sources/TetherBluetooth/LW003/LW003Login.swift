public import TetherCore

/// The login an LW003-V3 asks for when its advertisement says a password is required
/// (ble-profiles.md A3): written to `AA00` as `ED 01 01 08 <8 ASCII bytes>`, answered there by an
/// ``LW003LoginResult``. A device that gets none within a minute disconnects (reason `01`).
///
/// Its description never shows the password.
public struct LW003Login: Hashable, Sendable, CustomStringConvertible {
    /// The number of characters of every LW003 password.
    public static let passwordLength = 8

    /// The password: exactly 8 printable ASCII characters.
    public let password: String

    /// A login with `password`.
    ///
    /// - Throws: `TetherError(.invalidArgument)` unless the password is 8 printable ASCII
    ///   characters (the vendors' clients cannot send anything else).
    public init(password: String) throws(TetherError) {
        let bytes = Array(password.utf8)
        guard bytes.count == Self.passwordLength, bytes.allSatisfy(Self.isPrintableASCII) else {
            throw TetherError(.invalidArgument, "an LW003 password is 8 printable ASCII characters")
        }
        self.password = password
    }

    /// Decodes the value written to `AA00` (the simulated device's side).
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless it is `ED 01 01 08` and 8 printable ASCII bytes.
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.count == 12, bytes[0..<4] == [0xED, 0x01, 0x01, 0x08] else {
            throw TetherError(
                .malformedFrame, "an LW003 login is ED 01 01 08 and 8 bytes, not \(BluetoothProfileBytes.hexPrefix(bytes)) (\(bytes.count) bytes)")
        }
        guard bytes[4...].allSatisfy(Self.isPrintableASCII) else {
            throw TetherError(.malformedFrame, "an LW003 login password is not printable ASCII")
        }
        self.password = String(decoding: bytes[4...], as: UTF8.self)
    }

    /// The 12 bytes written to `AA00`.
    public var bytes: [UInt8] { [0xED, 0x01, 0x01, 0x08] + Array(password.utf8) }

    public var description: String { "LW003Login(password: <8 characters>)" }

    private static func isPrintableASCII(_ byte: UInt8) -> Bool { (0x20...0x7E).contains(byte) }
}

/// The device's answer to an ``LW003Login``, notified on `AA00`: `ED 01 01 01 <result>`.
public enum LW003LoginResult: Hashable, Sendable, CaseIterable {
    /// `01`: the password was right; the link is ready.
    case accepted
    /// `00` (or anything but `01`): a wrong password. Disconnect; the device will not listen.
    case rejected

    /// Decodes an `AA00` notification.
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless it is 5 bytes `ED 01 01 01 <result>` (both
    ///   vendor clients ignore any other value there).
    public init(decoding bytes: [UInt8]) throws(TetherError) {
        guard bytes.count == 5, bytes[0..<4] == [0xED, 0x01, 0x01, 0x01] else {
            throw TetherError(
                .malformedFrame, "an LW003 login result is ED 01 01 01 <result>, not \(BluetoothProfileBytes.hexPrefix(bytes)) (\(bytes.count) bytes)")
        }
        self = bytes[4] == 0x01 ? .accepted : .rejected
    }

    /// The 5 bytes a device notifies on `AA00`.
    public var bytes: [UInt8] { [0xED, 0x01, 0x01, 0x01, self == .accepted ? 0x01 : 0x00] }
}

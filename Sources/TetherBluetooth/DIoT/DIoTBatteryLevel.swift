public import TetherCore

/// The charge a DIoT sensor reports on the standard Battery Level characteristic (`2A19`,
/// ble-profiles.md B6), read or notified.
public struct DIoTBatteryLevel: Hashable, Sendable, CustomStringConvertible {
    /// The charge, 0…100 %.
    public let percent: UInt8

    /// A level; throws `TetherError(.invalidArgument)` above 100 %.
    public init(percent: UInt8) throws(TetherError) {
        guard percent <= 100 else { throw TetherError(.invalidArgument, "a battery level of \(percent) % is above 100") }
        self.percent = percent
    }

    /// Decodes the characteristic's value.
    ///
    /// - Throws: `TetherError(.malformedFrame)` unless it is one byte of 0…100.
    public init(decoding value: [UInt8]) throws(TetherError) {
        guard value.count == 1, value[0] <= 100 else {
            throw TetherError(.malformedFrame, "a battery level is one byte of 0...100, not \(BluetoothProfileBytes.hexPrefix(value)) (\(value.count) bytes)")
        }
        self.percent = value[0]
    }

    /// The characteristic's value.
    public var bytes: [UInt8] { [percent] }

    public var description: String { "\(percent) %" }
}

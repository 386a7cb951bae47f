public import TetherCore

/// One row of a DIoT sensor's rate table (`C003`, ble-profiles.md B4): how often a channel's data
/// characteristic updates.
///
/// ```
/// <channel u8> <interval u32 little-endian, milliseconds; 0 = automatic>
/// ```
public struct DIoTRateRecord: DIoTRecord, CustomStringConvertible {
    public static let encodedLength = 5

    /// The channel, 1…9.
    public var channel: UInt8
    /// The update interval in milliseconds; 0 lets the device decide (the Tether simulator then
    /// notifies on every change).
    public var intervalMilliseconds: UInt32

    /// Channel `channel` updates every `intervalMilliseconds` (0 = automatic).
    public init(channel: UInt8, intervalMilliseconds: UInt32) {
        self.channel = channel
        self.intervalMilliseconds = intervalMilliseconds
    }

    public init(recordBytes: ArraySlice<UInt8>) throws(TetherError) {
        guard recordBytes.count == Self.encodedLength, let interval = BluetoothProfileBytes.littleEndianUInt32(recordBytes, at: 1) else {
            throw TetherError(.malformedFrame, "a DIoT rate record has \(recordBytes.count) bytes, not 5")
        }
        self.init(channel: recordBytes[recordBytes.startIndex], intervalMilliseconds: interval)
    }

    /// Whether the device picks the rate itself (interval 0).
    public var isAutomatic: Bool { intervalMilliseconds == 0 }

    public var bytes: [UInt8] { [channel] + BluetoothProfileBytes.littleEndianBytes(intervalMilliseconds) }

    /// `channel 1 every 1000 ms`, `channel 2 automatic`.
    public var description: String { isAutomatic ? "channel \(channel) automatic" : "channel \(channel) every \(intervalMilliseconds) ms" }
}

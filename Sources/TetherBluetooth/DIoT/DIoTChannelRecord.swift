public import TetherCore

/// One row of a DIoT sensor's channel map (`C002`, ble-profiles.md B4): which feature the data
/// characteristic of a channel carries (`D001` for channel 1, …).
///
/// ```
/// <channel u8, 1…9> <feature code u8, 0 = none>
/// ```
public struct DIoTChannelRecord: DIoTRecord, CustomStringConvertible {
    public static let encodedLength = 2

    /// The channel, 1…9 (other numbers are kept as received; a device ignores them).
    public var channel: UInt8
    /// The feature it carries; ``DIoTFeatureCode/empty`` for none.
    public var feature: DIoTFeatureCode

    /// Channel `channel` carries `feature`.
    public init(channel: UInt8, feature: DIoTFeatureCode) {
        self.channel = channel
        self.feature = feature
    }

    public init(recordBytes: ArraySlice<UInt8>) throws(TetherError) {
        guard recordBytes.count == Self.encodedLength else {
            throw TetherError(.malformedFrame, "a DIoT channel record has \(recordBytes.count) bytes, not 2")
        }
        self.init(channel: recordBytes[recordBytes.startIndex], feature: DIoTFeatureCode(rawValue: recordBytes[recordBytes.startIndex + 1]))
    }

    public var bytes: [UInt8] { [channel, feature.rawValue] }

    /// `channel 1 → temperature`.
    public var description: String { "channel \(channel) → \(feature)" }
}

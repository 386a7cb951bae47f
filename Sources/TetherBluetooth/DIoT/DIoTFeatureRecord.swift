public import TetherCore

/// One row of a DIoT sensor's feature table (`C001`, ble-profiles.md B4) or one live value of a
/// data channel (`D001`–`D009`, B6): a feature code and its typed value.
///
/// ```
/// <code u8> <value: 4 bytes little-endian, typed by the code>
/// ```
public struct DIoTFeatureRecord: DIoTRecord, CustomStringConvertible {
    public static let encodedLength = 5

    /// Which feature.
    public let code: DIoTFeatureCode
    /// Its value.
    public let value: DIoTFeatureValue
    private let valueBytes: [UInt8]

    /// A record; the value must have the code's type, or be 4 raw bytes.
    ///
    /// - Throws: `TetherError(.wrongValueType)` for a value of another type;
    ///   `TetherError(.invalidArgument)` for raw bytes that are not 4.
    public init(code: DIoTFeatureCode, value: DIoTFeatureValue) throws(TetherError) {
        guard value.valueType == code.valueType || value.valueType == .raw else {
            throw TetherError(.wrongValueType, "DIoT feature \(code) takes a \(code.valueType) value, not \(value.valueType)")
        }
        self.code = code
        self.value = value
        self.valueBytes = try value.bytes()
    }

    /// Decodes 5 bytes: the code, then the value read as the code's type.
    public init(recordBytes: ArraySlice<UInt8>) throws(TetherError) {
        guard recordBytes.count == Self.encodedLength, let first = recordBytes.first else {
            throw TetherError(.malformedFrame, "a DIoT feature record has \(recordBytes.count) bytes, not 5")
        }
        let code = DIoTFeatureCode(rawValue: first)
        try self.init(code: code, value: DIoTFeatureValue(bytes: Array(recordBytes.dropFirst()), as: code.valueType))
    }

    /// The code's name (`temperature`), as the reference writes it.
    public var name: String { code.name }

    public var bytes: [UInt8] { [code.rawValue] + valueBytes }

    /// `temperature = 25.0`.
    public var description: String { "\(code) = \(value)" }

    /// Decodes the value of a data characteristic (`D001`–`D009`): the records of the features
    /// mapped to that channel, or none when the device sends the single byte `00` (nothing mapped;
    /// iOS raises an `empty` error there, Android a parse error).
    public static func decodeChannelData(_ notification: [UInt8]) throws(TetherError) -> [DIoTFeatureRecord] {
        if notification == [0x00] { return [] }
        return try decodeList(notification)
    }

    /// The value a data characteristic holds for `records`: `00` when there are none.
    public static func channelData(_ records: [DIoTFeatureRecord]) -> [UInt8] {
        records.isEmpty ? [0x00] : records.flatMap(\.bytes)
    }
}

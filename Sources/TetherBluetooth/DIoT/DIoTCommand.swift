public import TetherCore

/// A request a central writes to a DIoT sensor's command interface (ble-profiles.md B4): fetch,
/// set or clean rows of the feature table (`C001`), the channel map (`C002`) or the rate table
/// (`C003`). Byte 0 is the opcode (`01` fetch, `02` set, `03` clean); the sensor answers with a
/// notification of records on the same characteristic (``DIoTFeatureRecord``,
/// ``DIoTChannelRecord``, ``DIoTRateRecord``).
public enum DIoTCommand: Hashable, Sendable {
    /// `C001` ← `01`: every feature.
    case fetchAllFeatures
    /// `C001` ← `01 <code>`: one feature.
    case fetchFeature(DIoTFeatureCode)
    /// `C001` ← `02 <code> <v0 v1 v2 v3>`: set a feature's value.
    case setFeature(DIoTFeatureRecord)
    /// `C001` ← `03 <code>`: reset a feature to its default (value 0).
    case cleanFeature(DIoTFeatureCode)
    /// `C001` ← `03`: reset every feature.
    case cleanAllFeatures

    /// `C002` ← `01`: the whole channel map.
    case fetchAllChannels
    /// `C002` ← `01 <channel>`: one channel.
    case fetchChannel(UInt8)
    /// `C002` ← `02 <channel> <code>`: map a feature to a channel (replacing the one it had).
    case setChannel(DIoTChannelRecord)
    /// `C002` ← `03 <channel>`: unmap a channel.
    case cleanChannel(UInt8)
    /// `C002` ← `03`: unmap every channel.
    case cleanAllChannels

    /// `C003` ← `01`: every channel's rate.
    case fetchAllRates
    /// `C003` ← `01 <channel>`: one channel's rate.
    case fetchRate(UInt8)
    /// `C003` ← `02 <channel> <interval u32 LE>`: set a channel's rate.
    case setRate(DIoTRateRecord)
    /// `C003` ← `03 <channel>`: a channel back to automatic (0).
    case cleanRate(UInt8)
    /// `C003` ← `03`: every channel back to automatic.
    case cleanAllRates

    /// The table a command works on, and so the characteristic it is written to.
    public enum Table: Hashable, Sendable, CaseIterable {
        /// The feature table, `C001`.
        case features
        /// The channel map, `C002`.
        case channels
        /// The rate table, `C003`.
        case rates

        /// The characteristic of the table.
        public var characteristic: BluetoothUUID {
            switch self {
            case .features: DIoTGATT.features
            case .channels: DIoTGATT.channels
            case .rates: DIoTGATT.rates
            }
        }

        /// The table of `C001`, `C002` or `C003`; nil for any other characteristic.
        public init?(characteristic: BluetoothUUID) {
            guard let table = Self.allCases.first(where: { $0.characteristic == characteristic }) else { return nil }
            self = table
        }
    }

    static let fetch: UInt8 = 0x01
    static let set: UInt8 = 0x02
    static let clean: UInt8 = 0x03

    /// The table, and so the characteristic, to write to.
    public var table: Table {
        switch self {
        case .fetchAllFeatures, .fetchFeature, .setFeature, .cleanFeature, .cleanAllFeatures: .features
        case .fetchAllChannels, .fetchChannel, .setChannel, .cleanChannel, .cleanAllChannels: .channels
        case .fetchAllRates, .fetchRate, .setRate, .cleanRate, .cleanAllRates: .rates
        }
    }

    /// The characteristic to write to.
    public var characteristic: BluetoothUUID { table.characteristic }

    /// The bytes to write.
    public var bytes: [UInt8] {
        switch self {
        case .fetchAllFeatures, .fetchAllChannels, .fetchAllRates: [Self.fetch]
        case .fetchFeature(let code): [Self.fetch, code.rawValue]
        case .fetchChannel(let channel), .fetchRate(let channel): [Self.fetch, channel]
        case .setFeature(let record): [Self.set] + record.bytes
        case .setChannel(let record): [Self.set] + record.bytes
        case .setRate(let record): [Self.set] + record.bytes
        case .cleanFeature(let code): [Self.clean, code.rawValue]
        case .cleanChannel(let channel), .cleanRate(let channel): [Self.clean, channel]
        case .cleanAllFeatures, .cleanAllChannels, .cleanAllRates: [Self.clean]
        }
    }

    /// Decodes what a central wrote to a table's characteristic (the simulated sensor's side).
    ///
    /// - Throws: `TetherError(.malformedFrame)` for an unknown opcode or a length the opcode does
    ///   not take.
    public init(decoding bytes: [UInt8], table: Table) throws(TetherError) {
        guard let opcode = bytes.first else { throw TetherError(.malformedFrame, "an empty DIoT \(table) request") }
        let argument = bytes.count == 2 ? bytes[1] : nil
        switch (opcode, table, bytes.count) {
        case (Self.fetch, .features, 1): self = .fetchAllFeatures
        case (Self.fetch, .channels, 1): self = .fetchAllChannels
        case (Self.fetch, .rates, 1): self = .fetchAllRates
        case (Self.clean, .features, 1): self = .cleanAllFeatures
        case (Self.clean, .channels, 1): self = .cleanAllChannels
        case (Self.clean, .rates, 1): self = .cleanAllRates
        case (Self.fetch, .features, 2): self = .fetchFeature(DIoTFeatureCode(rawValue: argument ?? 0))
        case (Self.fetch, .channels, 2): self = .fetchChannel(argument ?? 0)
        case (Self.fetch, .rates, 2): self = .fetchRate(argument ?? 0)
        case (Self.clean, .features, 2): self = .cleanFeature(DIoTFeatureCode(rawValue: argument ?? 0))
        case (Self.clean, .channels, 2): self = .cleanChannel(argument ?? 0)
        case (Self.clean, .rates, 2): self = .cleanRate(argument ?? 0)
        case (Self.set, .features, 1 + DIoTFeatureRecord.encodedLength): self = .setFeature(try DIoTFeatureRecord(recordBytes: bytes[1...]))
        case (Self.set, .channels, 1 + DIoTChannelRecord.encodedLength): self = .setChannel(try DIoTChannelRecord(recordBytes: bytes[1...]))
        case (Self.set, .rates, 1 + DIoTRateRecord.encodedLength): self = .setRate(try DIoTRateRecord(recordBytes: bytes[1...]))
        default:
            throw TetherError(
                .malformedFrame, "a DIoT \(table) request \(BluetoothProfileBytes.hexPrefix(bytes)) (\(bytes.count) bytes) has an unknown opcode or length")
        }
    }
}

/// What kind of beacon an LW003-V3 scanned and stored (ble-profiles.md A5, the record type).
/// The raw advertisement of types 0–3 is public (iBeacon, Eddystone); 4–9 are MOKO BeaconX Pro
/// frames the sources do not describe; 10 is everything else.
public enum LW003BeaconType: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case iBeacon = 0
    case eddystoneUID = 1
    case eddystoneURL = 2
    case eddystoneTLM = 3
    case bxpIBeacon = 4
    case bxpDeviceInfo = 5
    case bxpACC = 6
    case bxpTH = 7
    case bxpButton = 8
    case bxpTag = 9
    /// Type 10, "Unknown / other". Record types above 10, which no device sends, decode as this.
    case other = 10

    /// The type a record's byte stands for: 0…10 by the table, anything above as ``other``.
    public init(recordByte: UInt8) {
        self = Self(rawValue: recordByte) ?? .other
    }

    /// The name the reference's table gives the type: `iBeacon`, `Eddystone-UID`, `BXP-T&H`,
    /// `Unknown`, ….
    public var name: String {
        switch self {
        case .iBeacon: "iBeacon"
        case .eddystoneUID: "Eddystone-UID"
        case .eddystoneURL: "Eddystone-URL"
        case .eddystoneTLM: "Eddystone-TLM"
        case .bxpIBeacon: "BXP-iBeacon"
        case .bxpDeviceInfo: "BXP-DeviceInfo"
        case .bxpACC: "BXP-ACC"
        case .bxpTH: "BXP-T&H"
        case .bxpButton: "BXP-Button"
        case .bxpTag: "BXP-Tag"
        case .other: "Unknown"
        }
    }

    public var description: String { name }
}

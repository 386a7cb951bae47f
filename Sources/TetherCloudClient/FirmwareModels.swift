import TetherCloudProtocol
import TetherCore

/// A firmware upgrade of a device (Tether extension): an entry of the cloud's command ledger,
/// moved on by what the device reports.
public struct FirmwareUpgrade: Hashable, Sendable {
    /// Where the upgrade is.
    public enum State: String, Hashable, Sendable {
        /// Waiting for the device to connect.
        case queued
        /// Offered to the device.
        case sent
        /// The device reports progress.
        case acknowledged
        /// The device runs the new version.
        case applied
        /// The device reported a failure, or the package was removed.
        case failed
        /// The device did not finish before the upgrade's deadline.
        case expired

        /// No further change will happen.
        public var isFinal: Bool { self == .applied || self == .failed || self == .expired }
    }

    /// The ledger entry (``TetherCloudAPI/command(_:id:)``).
    public var commandID: Int64
    public var did: String
    public var state: State
    public var firmwareID: Int64
    public var version: String
    public var module: String
    /// How far the device got, 1…100 percent; nil before it reported or after a failure.
    public var progress: Int?
    /// The device's failure step (-1 upgrade, -2 download, -3 verification, -4 flashing); nil unless it failed so.
    public var failureStep: Int?
    /// What the device said with its last step.
    public var detail: String
    /// Unix milliseconds.
    public var updatedAt: Int64

    init(_ body: FirmwareUpgradeBody) {
        commandID = body.commandID
        did = body.did
        state = State(rawValue: body.state) ?? .failed
        firmwareID = body.firmwareID
        version = body.version
        module = body.module
        progress = body.step.flatMap { $0 >= 0 ? $0 : nil }
        failureStep = body.step.flatMap { $0 < 0 ? $0 : nil }
        detail = body.desc
        updatedAt = body.updatedAt
    }
}

/// A firmware package of a product, as an administrator added it.
public struct FirmwarePackage: Hashable, Sendable {
    public var id: Int64
    public var module: String
    public var version: String
    /// Bytes.
    public var size: Int64
    /// Lowercase hex.
    public var sha256: String
    /// Unix seconds.
    public var createdAt: Int64
}

/// What a device runs and may be upgraded to (``TetherCloudAPI/firmware(_:did:)``).
public struct DeviceFirmware: Hashable, Sendable {
    /// The version each module reports (`default` for the whole device).
    public var versions: [String: String]
    /// The packages of the device's product.
    public var packages: [FirmwarePackage]
    /// Its upgrades, newest first.
    public var upgrades: [FirmwareUpgrade]

    init(_ body: DeviceFirmwareBody) {
        versions = Dictionary(body.modules.map { ($0.module, $0.version) }, uniquingKeysWith: { first, _ in first })
        packages = body.packages.map {
            FirmwarePackage(id: $0.id, module: $0.module, version: $0.version, size: $0.size, sha256: $0.sha256, createdAt: $0.createdAt)
        }
        upgrades = body.upgrades.map(FirmwareUpgrade.init)
    }
}

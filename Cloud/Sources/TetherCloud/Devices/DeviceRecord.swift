import TetherCore

/// A registered device.
public struct DeviceRecord: Sendable, Equatable {
    public var did: String
    public var productKey: String
    public var mac: String?
    public var passcode: String
    public var deviceName: String
    public var type: String
    public var isDisabled: Bool
    public var isOnline: Bool
    public var wifiSoftVersion: String
    public var mcuSoftVersion: String
    public var mcuHardVersion: String
    public var protocolVersion: String

    static let columns = """
        d.did, d.product_key, d.mac, d.passcode, d.device_name, d.type, d.is_disabled, d.is_online,
        d.wifi_soft_version, d.mcu_soft_version, d.mcu_hard_version, d.protocol_version
        """

    init(row: SQLRow) throws(StorageError) {
        did = try row.text("did")
        productKey = try row.text("product_key")
        mac = row.optionalText("mac")
        passcode = try row.text("passcode")
        deviceName = try row.text("device_name")
        type = try row.text("type")
        isDisabled = try row.bool("is_disabled")
        isOnline = try row.bool("is_online")
        wifiSoftVersion = try row.text("wifi_soft_version")
        mcuSoftVersion = try row.text("mcu_soft_version")
        mcuHardVersion = try row.text("mcu_hard_version")
        protocolVersion = try row.text("protocol_version")
    }
}

/// One user's binding of a device.
public struct BindingRecord: Sendable, Equatable {
    public var role: BindingRole
    public var remark: String
    public var alias: String
    public var labels: [String]

    static let columns = "b.role, b.remark, b.dev_alias, b.dev_label"

    init(row: SQLRow) throws(StorageError) {
        role = BindingRole(rawValue: try row.text("role")) ?? .normal
        remark = try row.text("remark")
        alias = try row.text("dev_alias")
        let labelJSON = try? JSONValue.parse(try row.text("dev_label"))
        labels = labelJSON?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

/// The reference's binding roles (gizwits-openapi.md §2.3).
public enum BindingRole: String, Sendable {
    /// First binder of a product without sharing.
    case special
    /// Later binders of a product without sharing.
    case normal
    /// The one user who may share a device of a product with sharing.
    case owner
    /// A user the owner shared the device with.
    case guest
}

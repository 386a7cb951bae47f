import Synchronization
import TetherCloudClient

/// Which paths reach a device right now.
public enum Reachability: String, Hashable, Sendable, CustomStringConvertible {
    case none
    /// It answers discovery on the LAN (or was added by address).
    case lan
    /// The cloud says it is connected, and the user is bound to it.
    case cloud
    case both

    public var description: String { rawValue }
}

/// What the cloud says about a device the user is bound to.
struct CloudPresence: Hashable, Sendable {
    var isOnline: Bool
    var remark: String
    var alias: String
    var role: String
    var productName: String
    var passcode: String
    var homeID: Int64?
    var roomID: Int64?
}

extension Device {
    /// Whether the user is bound to the device in the cloud.
    public var isBound: Bool { state.withLock { $0.path.isBound } }

    /// Whether the cloud says the device is connected to it (for bound devices).
    public var isOnlineInCloud: Bool { state.withLock { $0.path.isOnlineInCloud } }

    /// The user's name for the device in the cloud (`dev_alias`), when bound.
    public var alias: String? { state.withLock { $0.path.binding?.alias } }

    /// The user's remark for the device in the cloud, when bound.
    public var remark: String? { state.withLock { $0.path.binding?.remark } }

    /// The user's role on the device in the cloud (`special`, `normal`, `owner`, `guest`), when
    /// bound; a home's members are guests of its devices.
    public var role: String? { state.withLock { $0.path.binding?.role } }

    /// The home the device is placed in, when the user is one of its members (``TetherClient/homes``).
    public var homeID: Int64? { state.withLock { $0.path.binding?.homeID } }

    /// The device's room in that home, if it has one.
    public var roomID: Int64? { state.withLock { $0.path.binding?.roomID } }

    /// The paths that reach the device now.
    public var reachability: Reachability { state.withLock { $0.path.reachability } }

    /// Whether the device belongs in the list: seen on the LAN (now or before), added by
    /// address, or bound in the cloud.
    var isListed: Bool { state.withLock { $0.endpoint != nil || $0.path.isBound } }

    /// Records what the cloud's binding list says (nil: not bound any more).
    func updateCloud(_ device: CloudDevice?) {
        updatePath { state in
            let presence = device.map {
                CloudPresence(
                    isOnline: $0.isOnline, remark: $0.remark, alias: $0.alias, role: $0.role, productName: $0.productName, passcode: $0.passcode,
                    homeID: $0.homeID, roomID: $0.roomID)
            }
            if let device {
                if state.did.isEmpty { state.did = device.did }
                if state.productKey.isEmpty { state.productKey = device.productKey }
                if state.mac == nil, !device.mac.isEmpty { state.mac = Device.displayMAC(device.mac) }
                if state.passcode == nil, !device.passcode.isEmpty { state.passcode = device.passcode }
            }
            return [.binding(presence)]
        }
    }

    /// `ac:cf:23:50:d4:46`, from any spelling of a MAC address (anything else as it is).
    static func displayMAC(_ text: String) -> String {
        MACAddress.bytes(text).map(MACAddress.display) ?? text.lowercased()
    }

    /// The key devices are matched by, so that `AC:CF:23…` and `accf23…` compare equal.
    static func normalizedMAC(_ text: String) -> String {
        MACAddress.hexDigits(text) ?? text.lowercased()
    }
}

import TetherCore
import TetherDBus

/// BlueZ's error names (`org.bluez.Error.*`) as Tether's typed errors.
enum BlueZErrors {
    static func map(_ reply: DBusMessage, doing what: String) -> TetherError {
        let name = reply.errorName ?? ""
        let text = "\(what): \(name)\(reply.errorText.map { " (\($0.prefix(200)))" } ?? "")"
        switch name {
        case "org.bluez.Error.NotPermitted", "org.bluez.Error.NotSupported": return TetherError(.gattOperationNotPermitted, text)
        case "org.bluez.Error.NotAuthorized", "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.AuthenticationRejected",
            "org.bluez.Error.AuthenticationCanceled":
            return TetherError(.peripheralDisconnected, text)
        case "org.bluez.Error.NotReady": return TetherError(.bluetoothPoweredOff, text)
        case "org.bluez.Error.DoesNotExist", "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod":
            return TetherError(.peripheralNotFound, text)
        case "org.bluez.Error.NotConnected": return TetherError(.peripheralDisconnected, text)
        default: return TetherError(.gattOperationFailed, text)
        }
    }
}

/// The adapter's state, as the platforms report it (CoreBluetooth's `CBManagerState`, BlueZ's
/// adapter presence and `Powered`).
public enum BluetoothState: String, Hashable, Sendable, CaseIterable {
    /// Not yet known (the stack is starting).
    case unknown
    /// The stack is restarting; wait for the next state.
    case resetting
    /// No Bluetooth LE controller (or no such adapter).
    case unsupported
    /// The app is not allowed to use Bluetooth.
    case unauthorized
    /// Present but switched off.
    case poweredOff
    /// Ready: scanning and connecting work.
    case poweredOn
}

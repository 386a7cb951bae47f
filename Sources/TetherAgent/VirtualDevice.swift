public import TetherCore
public import TetherGizwitsLAN
import Synchronization

/// A device whose state is its data points: what the LAN server serves, the simulator changes
/// and tests inspect. Thread-safe; every change is published on ``changes``.
public final class VirtualDevice: Sendable {
    /// Who the device is on the LAN: did, MAC, passcode and product key.
    public let identity: DeviceIdentity
    /// The product model: which data points exist, their types and whether apps may write them.
    public let model: ThingModel
    /// Encodes the device's P0 reports and decodes the controls it receives, for ``model``.
    public let codec: P0Codec
    /// The full status after every change, whoever made it.
    public let changes = Broadcast<DeviceStatus>()
    /// What happened to the device, for logs and tests.
    public let events = Broadcast<VirtualDeviceEvent>()
    /// The cloud's grant keys and when a passcode alone logs in on the LAN.
    public let lanGrants: LANGrantTrust

    private struct State {
        var values: [String: DataValue]
        var bindingWindowOpen: Bool
        var onboarding: Bool
        var muted = false
        var wifi: (ssid: String, key: String)?
        /// The pairing token onboarding brought, until the cloud has answered it.
        var pairingToken: String?
        var firmwareVersion: String
    }

    private let state: Mutex<State>
    /// Called on every change, under the lock, in order: for connections that push from their
    /// event loop without a task waking per change.
    private let observers = Mutex<(next: Int, all: [Int: @Sendable (DeviceStatus) -> Void])>((0, [:]))

    /// - Parameters:
    ///   - bindable: whether the binding window is open (the passcode is handed out on request).
    ///   - onboarding: whether the device waits for Wi-Fi credentials (SoftAP mode, `0x0001`).
    ///   - lanGrants: the grant keys and passcode rule of its LAN logins.
    public init(
        model: ThingModel, identity: DeviceIdentity, values: [String: DataValue] = [:], bindable: Bool = false, onboarding: Bool = false,
        lanGrants: LANGrantTrust = LANGrantTrust()
    ) throws(TetherError) {
        self.identity = identity
        self.lanGrants = lanGrants
        self.model = model
        self.codec = try P0Codec(model: model)
        var initial = Self.defaultValues(for: model)
        for (name, value) in values { initial[name] = try model.normalize(value, for: name) }
        self.state = Mutex(State(values: initial, bindingWindowOpen: bindable, onboarding: onboarding, firmwareVersion: identity.firmwareVersion))
    }

    /// A snapshot of every data point's current value.
    public var status: DeviceStatus { DeviceStatus(values: state.withLock { $0.values }, model: model) }

    /// Whether the passcode is handed to any client that asks for it (`0x0006`); outside the window
    /// the request gets an empty answer and the connection is closed.
    public var isBindingWindowOpen: Bool {
        get { state.withLock { $0.bindingWindowOpen } }
        set { state.withLock { $0.bindingWindowOpen = newValue } }
    }

    /// A muted device keeps its connections open but answers nothing: a hung module.
    public var isMuted: Bool {
        get { state.withLock { $0.muted } }
        set { state.withLock { $0.muted = newValue } }
    }

    /// Whether the device waits for Wi-Fi credentials over SoftAP (UDP `0x0001`); cleared once it
    /// accepts them.
    public var isOnboarding: Bool { state.withLock { $0.onboarding } }

    /// The firmware version the device runs: its identity's at first, a new one after an upgrade.
    public var firmwareVersion: String {
        get { state.withLock { $0.firmwareVersion } }
        set { state.withLock { $0.firmwareVersion = newValue } }
    }

    /// The SSID received by SoftAP onboarding, if any.
    public var configuredSSID: String? { state.withLock { $0.wifi?.ssid } }

    /// Applies a control from an app. Invalid points are skipped (and reported as an event);
    /// returns the status afterwards.
    @discardableResult
    public func applyControl(_ values: [String: DataValue], from client: String) -> DeviceStatus {
        var accepted: [String: DataValue] = [:]
        for (name, value) in values {
            do throws(TetherError) {
                guard model.dataPoint(named: name)?.kind == .writable else {
                    throw TetherError(.readOnlyDataPoint, "not writable", dataPoint: name)
                }
                accepted[name] = try model.normalize(value, for: name)
            } catch {
                events.yield(.rejectedControl(error, client: client))
            }
        }
        if !accepted.isEmpty { events.yield(.controlled(accepted, client: client)) }
        return update(accepted)
    }

    /// Changes data points from the device side (sensors, the simulator); publishes the status
    /// when anything changed. Values are normalized against the model; unknown names are ignored.
    @discardableResult
    public func update(_ values: [String: DataValue]) -> DeviceStatus {
        state.withLock { state in
            var changed = false
            for (name, value) in values {
                guard let normalized = try? model.normalize(value, for: name), state.values[name] != normalized else { continue }
                state.values[name] = normalized
                changed = true
            }
            let status = DeviceStatus(values: state.values, model: model)
            // Published under the lock: two concurrent changes reach every client in the order they
            // were made, so nobody keeps the older status as the last one.
            if changed {
                changes.yield(status)
                for observer in observers.withLock({ $0.all.values }) { observer(status) }
            }
            return status
        }
    }

    /// Calls `observer` with the full status after every change until ``removeChangeObserver(_:)``,
    /// synchronously under the device's lock: it must not block or change the device.
    func addChangeObserver(_ observer: @escaping @Sendable (DeviceStatus) -> Void) -> Int {
        observers.withLock { observers in
            observers.next += 1
            observers.all[observers.next] = observer
            return observers.next
        }
    }

    func removeChangeObserver(_ id: Int) {
        _ = observers.withLock { $0.all.removeValue(forKey: id) }
    }

    /// Records Wi-Fi credentials from onboarding and leaves onboarding mode. Returns false when
    /// the device was not onboarding or the credentials are too long (GAgent's SoftAP limits:
    /// 32/32; smart config carries passwords up to 64 bytes).
    func configureWiFi(ssid: String, key: String, maximumKeyLength: Int = 32, pairingToken: String? = nil) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard state.onboarding, ssid.utf8.count <= 32, key.utf8.count <= maximumKeyLength, !ssid.isEmpty else { return false }
            state.wifi = (ssid, key)
            state.onboarding = false
            if let pairingToken, !pairingToken.isEmpty { state.pairingToken = pairingToken }
            return true
        }
        if accepted { events.yield(.configured(ssid: ssid)) }
        return accepted
    }

    /// The pairing token onboarding brought, not yet answered by the cloud. A secret.
    var pendingPairingToken: String? { state.withLock { $0.pairingToken } }

    /// The cloud answered the token (bound, or refused for good): it is not presented again.
    func pairingTokenAnswered(code: Int, message: String) {
        state.withLock { $0.pairingToken = nil }
        events.yield(.paired(code: code, message: message))
    }

    /// Bool false, enum 0, writable numbers at the value nearest 0, sensors (read-only numbers)
    /// mid-range, empty text, zero bytes.
    static func defaultValues(for model: ThingModel) -> [String: DataValue] {
        var values: [String: DataValue] = [:]
        for point in model.dataPoints {
            switch point.type {
            case .bool: values[point.name] = .bool(false)
            case .enumeration: values[point.name] = .int(0)
            case .number(let spec) where point.kind == .writable:
                let zero = (-spec.addition / spec.ratio).rounded()
                let raw = UInt32(min(max(zero, Double(spec.rawMin)), Double(spec.rawMax)))
                values[point.name] = spec.value(raw: raw)
            case .number(let spec):
                values[point.name] = spec.value(raw: spec.rawMin + (spec.rawMax - spec.rawMin) / 2)
            case .text: values[point.name] = .string("")
            case .binary(let length): values[point.name] = .binary(Array(repeating: 0, count: length))
            }
        }
        return values
    }
}

/// Something that happened to a virtual device.
public enum VirtualDeviceEvent: Sendable {
    /// A TCP client connected; the string is its `address:port`.
    case clientConnected(String)
    /// A client logged in with the device's passcode or a grant.
    case clientLoggedIn(String)
    /// A client was turned away or closed: too many clients, a command before login, a wrong
    /// passcode, a passcode request outside the binding window.
    case clientRefused(String, reason: String)
    /// A client's TCP connection ended.
    case clientDisconnected(String)
    /// A client changed writable points to these normalized values (`client` is `cloud` for the
    /// cloud link).
    case controlled([String: DataValue], client: String)
    /// A control was refused: an unknown or read-only point, a value that does not fit, unreadable P0.
    case rejectedControl(TetherError, client: String)
    /// A client sent transparent (binary) data, which the device echoes back.
    case transparentData([UInt8], client: String)
    /// SoftAP onboarding gave the device a network (the key is not reported).
    case configured(ssid: String)
    /// The cloud answered the pairing token onboarding brought: 200 bound, or the refusal's code.
    case paired(code: Int, message: String)
    /// The device's cloud link connected to the gateway.
    case cloudConnected
    /// The cloud link could not connect (it tries again).
    case cloudUnreachable(String)
    /// The cloud called a service of the device's model.
    case serviceCalled(String, JSONValue)
    /// The cloud offered firmware `version`; the download began.
    case upgradeStarted(version: String)
    /// The device now runs firmware `version`.
    case upgraded(version: String)
    /// An upgrade failed at `step` (Aliyun's negative steps: -2 download, -3 verification).
    case upgradeFailed(step: Int, reason: String)
}

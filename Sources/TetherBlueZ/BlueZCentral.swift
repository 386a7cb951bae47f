public import Logging
import Synchronization
public import TetherBluetooth
public import TetherCore
public import TetherDBus

/// The Bluetooth LE central on Linux: BlueZ (`bluetoothd`) over its D-Bus API, on one adapter.
///
/// Open it with ``withCentral(adapter:bus:logger:_:)``; its D-Bus connection lives as long as
/// the closure.
public final class BlueZCentral: BluetoothCentral {
    let bus: DBusConnection
    /// `hci0`, …
    public let adapter: String
    let adapterPath: String
    let logger: Logger
    /// Everything BlueZ has told this central about its objects, kept current by its signals.
    let objects: Mutex<BlueZObjects>
    private let objectSignals = Mutex<Cancellable?>(nil)
    private let watchers = Mutex<(next: Int, byID: [Int: @Sendable (String?) -> Void])>((0, [:]))

    private init(bus: DBusConnection, adapter: String, logger: Logger) {
        self.bus = bus
        self.adapter = adapter
        self.adapterPath = BlueZNames.adapterPath(adapter)
        self.logger = logger
        self.objects = Mutex(BlueZObjects())
    }

    /// One subscription for everything BlueZ says keeps the object tree current; the scans,
    /// links and state streams of this central watch the paths they care about.
    private func follow() async throws(TetherError) {
        let subscription = try await bus.subscribe(DBusMatchRule(sender: BlueZNames.service)) { [weak self] signal in
            self?.apply(signal)
        }
        objectSignals.withLock { $0 = subscription }
    }

    private func apply(_ signal: DBusMessage?) {
        let path: String?
        if let signal {
            path = objects.withLock { $0.apply(signal) }
            guard path != nil else { return }
        } else {
            path = nil
        }
        for watcher in watchers.withLock({ Array($0.byID.values) }) { watcher(path) }
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the standard socket), reads
    /// BlueZ's objects, and runs `body` with the central of `adapter`.
    public static func withCentral<Result: Sendable>(
        adapter: String = "hci0", bus address: DBusAddress, logger: Logger = Logger(label: "tether.bluez"),
        _ body: (BlueZCentral) async throws -> Result
    ) async throws -> Result {
        guard !adapter.isEmpty, adapter.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 || $0 >= 0x61 && $0 <= 0x7A }) else {
            throw TetherError(.invalidArgument, "\"\(adapter.prefix(32))\" is not an adapter name such as hci0")
        }
        return try await DBusConnection.withConnection(configuration: .init(address: address), logger: logger) { bus in
            let central = BlueZCentral(bus: bus, adapter: adapter, logger: logger)
            defer { central.objectSignals.withLock { $0?.cancel() } }
            try await central.follow()
            try await central.reload()
            return try await body(central)
        }
    }

    /// Reads every object again (`GetManagedObjects`).
    func reload() async throws(TetherError) {
        let reply = try await bus.exchange(
            .methodCall(destination: BlueZNames.service, path: "/", interface: BlueZNames.objectManager, member: "GetManagedObjects"))
        if reply.kind == .error {
            if reply.errorName == "org.freedesktop.DBus.Error.ServiceUnknown" || reply.errorName == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                throw TetherError(.bluetoothUnsupported, "bluetoothd is not running on the bus (\(reply.errorName ?? ""))")
            }
            throw BlueZErrors.map(reply, doing: "reading BlueZ's objects")
        }
        let fresh = BlueZObjects(managedObjects: reply.body)
        objects.withLock { $0 = fresh }
    }

    /// A call to BlueZ whose error replies become typed errors.
    func exchange(_ message: DBusMessage, doing what: String, timeout: Duration? = nil) async throws(TetherError) -> DBusMessage {
        let reply = try await bus.exchange(message, timeout: timeout)
        guard reply.kind == .error else { return reply }
        throw BlueZErrors.map(reply, doing: what)
    }

    /// Calls `handler` with each object path a BlueZ signal changed (nil: the bus closed)
    /// until the returned token is dropped.
    func watch(_ handler: @escaping @Sendable (String?) -> Void) -> Cancellable {
        let id = watchers.withLock { state in
            state.next += 1
            state.byID[state.next] = handler
            return state.next
        }
        return Cancellable { [weak self] in _ = self?.watchers.withLock { $0.byID.removeValue(forKey: id) } }
    }

    // MARK: - BluetoothCentral

    public func states() -> AsyncStream<BluetoothState> {
        let (stream, continuation) = AsyncStream<BluetoothState>.makeStream()
        let adapterPath = adapterPath
        let last = Mutex<BluetoothState?>(nil)
        let emit: @Sendable () -> Void = { [self] in
            let state = Self.state(objects.withLock { $0.properties(adapterPath, BlueZNames.adapter) })
            let changed = last.withLock { previous in
                defer { previous = state }
                return previous != state
            }
            if changed { continuation.yield(state) }
        }
        let watch = watch { path in
            guard let path else { return continuation.finish() }
            if path == adapterPath { emit() }
        }
        continuation.onTermination = { _ in watch.cancel() }
        emit()
        return stream
    }

    static func state(_ adapter: [String: DBusValue]?) -> BluetoothState {
        guard let adapter else { return .unsupported }
        guard let powered = adapter["Powered"]?.boolValue else { return .unknown }
        return powered ? .poweredOn : .poweredOff
    }

    public func scan(_ options: BluetoothScanOptions) async throws(TetherError) -> AsyncThrowingStream<BluetoothPeripheral, any Error> {
        try await BlueZScan.start(self, options)
    }

    /// The adapter's properties, or ``TetherError/Code/bluetoothAdapterNotFound``.
    func adapterProperties() throws(TetherError) -> [String: DBusValue] {
        guard let properties = objects.withLock({ $0.properties(adapterPath, BlueZNames.adapter) }) else {
            throw TetherError(.bluetoothAdapterNotFound, "BlueZ has no adapter \(adapter)")
        }
        return properties
    }

    /// The devices BlueZ keeps under the adapter (seen, paired or connected), by address.
    public func knownPeripherals(_ identifiers: [String]) async throws(TetherError) -> [BluetoothPeripheral] {
        _ = try adapterProperties()
        return objects.withLock { objects in
            identifiers.compactMap { address in
                guard MACAddress.bytes(address) != nil else { return nil }
                return objects.peripheral(at: BlueZNames.devicePath(adapter: adapter, address: address))
            }
        }
    }

    public func withConnection<Result: Sendable>(
        to identifier: String, options: BluetoothConnectionOptions, _ body: (any BluetoothConnection) async throws -> Result
    ) async throws -> Result {
        try await BlueZConnection.with(self, address: identifier, options: options, body)
    }
}

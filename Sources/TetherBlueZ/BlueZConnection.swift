import Synchronization
import TetherBluetooth
import TetherCore
import TetherDBus

/// A link to one device through BlueZ: `Device1.Connect`, services resolved, GATT calls on the
/// characteristics' objects, `Device1.Disconnect` at the end of the scope.
final class BlueZConnection: BluetoothConnection {
    let central: BlueZCentral
    let identifier: String
    let devicePath: String
    private let gatt: Mutex<(services: [BluetoothService], paths: [BluetoothCharacteristicID: String], mtu: Int?)>
    /// Why the link ended, once it has.
    private let ending = AsyncPromise<BluetoothDisconnection, TetherError>()
    /// Whether the app asked for the disconnection (so that the link's end is not the device's).
    private let byApp = Mutex(false)
    /// Notification streams to end with the link.
    private let streams = Mutex<[Int: AsyncStream<[UInt8]>.Continuation]>([:])
    private let watch = Mutex<Cancellable?>(nil)

    private init(central: BlueZCentral, identifier: String, devicePath: String) {
        self.central = central
        self.identifier = identifier
        self.devicePath = devicePath
        self.gatt = Mutex(([], [:], nil))
    }

    static func with<Result: Sendable>(
        _ central: BlueZCentral, address: String, options: BluetoothConnectionOptions, _ body: (any BluetoothConnection) async throws -> Result
    ) async throws -> Result {
        _ = try central.adapterProperties()
        let devicePath = BlueZNames.devicePath(adapter: central.adapter, address: address)
        let clock = ContinuousClock()
        let start = clock.now
        if central.objects.withLock({ $0.properties(devicePath, BlueZNames.device) }) == nil {
            // BlueZ knows only devices it has seen: look for this one first, as bleak does.
            let results = try await central.scan(BluetoothScanOptions(allowDuplicates: true))
            let wanted = address.uppercased()
            let found = await within(options.timeout) {
                do {
                    for try await peripheral in results where peripheral.identifier.uppercased() == wanted { return true }
                } catch {}
                return nil
            }
            guard found == true else {
                throw TetherError(.peripheralNotFound, "\(address) was not seen by \(central.adapter) within \(options.timeout)")
            }
        }
        var options = options
        options.timeout -= clock.now - start
        let connection = BlueZConnection(central: central, identifier: address, devicePath: devicePath)
        let resolved = AsyncStream<Void>.makeStream()
        connection.watch.withLock {
            $0 = central.watch { [weak connection] path in
                guard let connection else { return }
                guard let path else { return connection.ended(.other("the D-Bus connection to BlueZ closed")) }
                guard path == devicePath, let device = central.objects.withLock({ $0.properties(devicePath, BlueZNames.device) }) else { return }
                if device["ServicesResolved"]?.boolValue == true { resolved.continuation.yield() }
                if device["Connected"]?.boolValue == false, connection.isLinked {
                    connection.ended(central.objects.withLock { $0.disconnections[devicePath] })
                }
            }
        }
        defer { connection.watch.withLock { $0?.cancel() } }
        do {
            try await connection.connect(options: options, resolved: resolved.stream)
            let result = try await body(connection)
            await connection.disconnect()
            return result
        } catch {
            await connection.disconnect()
            throw error
        }
    }

    private var isLinked: Bool {
        !ending.isResolved
    }

    private func connect(options: BluetoothConnectionOptions, resolved: AsyncStream<Void>) async throws(TetherError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: options.timeout)
        _ = try await central.exchange(
            .methodCall(destination: BlueZNames.service, path: devicePath, interface: BlueZNames.device, member: "Connect"),
            doing: "connecting to \(identifier)", timeout: options.timeout)
        // Services are resolved a moment after the link is up; wait for BlueZ to say so.
        if central.objects.withLock({ $0.properties(devicePath, BlueZNames.device)?["ServicesResolved"]?.boolValue }) != true {
            let arrived = await within(deadline - clock.now) {
                for await _ in resolved { return true }
                return nil
            }
            guard arrived == true else {
                ended(.timeout)
                throw TetherError(.timeout, "\(identifier) connected but its services were not resolved within \(options.timeout)")
            }
        }
        let found = central.objects.withLock { $0.gatt(under: devicePath) }
        gatt.withLock { $0 = found }
    }

    private func disconnect() async {
        let first = byApp.withLock { asked in
            defer { asked = true }
            return !asked
        }
        guard first, isLinked else { return }
        _ = try? await central.exchange(
            .methodCall(destination: BlueZNames.service, path: devicePath, interface: BlueZNames.device, member: "Disconnect"),
            doing: "disconnecting \(identifier)", timeout: .seconds(5))
        ended(.byApp)
    }

    /// The link ended: `reason`, or (nil) the device's `Connected` went false and BlueZ did not
    /// say why.
    private func ended(_ reason: BluetoothDisconnection?) {
        guard isLinked else { return }
        let asked = byApp.withLock { $0 }
        let why: BluetoothDisconnection =
            switch reason {
            // Older BlueZ (and bluezoo) say nothing: if the app did not end it, the device did.
            case nil: asked ? .byApp : .byDevice
            case .byApp? where !asked: .other("another program on this host ended the link")
            case let reason?: reason
            }
        ending.resolve(.success(why))
        for stream in streams.withLock({ Array($0.values) }) { stream.finish() }
    }

    // MARK: - BluetoothConnection

    func services() async throws(TetherError) -> [BluetoothService] {
        gatt.withLock { $0.services }
    }

    private func path(_ id: BluetoothCharacteristicID, needs property: BluetoothCharacteristicProperties, for what: String) async throws(TetherError) -> String
    {
        let characteristic = try await characteristic(id)
        guard !characteristic.properties.isDisjoint(with: property) else {
            throw TetherError(.gattOperationNotPermitted, "\(id) of \(identifier) does not allow \(what) (it allows \(characteristic.properties.bluezFlags))")
        }
        guard isLinked else { throw TetherError(.peripheralDisconnected, "\(identifier) is no longer connected") }
        return gatt.withLock { $0.paths[id] } ?? ""
    }

    func read(_ characteristic: BluetoothCharacteristicID) async throws(TetherError) -> [UInt8] {
        let path = try await path(characteristic, needs: .read, for: "reading")
        let reply = try await central.exchange(
            .methodCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic, member: "ReadValue", body: [.properties([:])]),
            doing: "reading \(characteristic) of \(identifier)")
        guard let value = reply.body.first?.bytesValue else {
            throw TetherError(.unexpectedResponse, "BlueZ answered a read of \(characteristic) without bytes")
        }
        return value
    }

    func write(_ value: [UInt8], to characteristic: BluetoothCharacteristicID, type: BluetoothWriteType) async throws(TetherError) {
        let path = try await path(characteristic, needs: type == .withResponse ? .write : .writeWithoutResponse, for: "writing \(type)")
        _ = try await central.exchange(
            .methodCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic, member: "WriteValue",
                body: [.bytes(value), .properties(["type": .string(type == .withResponse ? "request" : "command")])]),
            doing: "writing \(characteristic) of \(identifier)")
    }

    func notifications(of characteristic: BluetoothCharacteristicID) async throws(TetherError) -> AsyncStream<[UInt8]> {
        let path = try await path(characteristic, needs: [.notify, .indicate], for: "notifications")
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        // Values arrive as PropertiesChanged of the characteristic's Value.
        let subscription = try await central.bus.subscribe(
            DBusMatchRule(
                sender: BlueZNames.service, path: path, interface: BlueZNames.properties, member: "PropertiesChanged", arg0: BlueZNames.gattCharacteristic)
        ) { signal in
            guard let signal else { return continuation.finish() }
            guard signal.body.count >= 2, let value = signal.body[1].propertiesValue?["Value"]?.bytesValue else { return }
            continuation.yield(value)
        }
        let id = streams.withLock { streams in
            let id = (streams.keys.max() ?? 0) + 1
            streams[id] = continuation
            return id
        }
        let bus = central.bus
        continuation.onTermination = { [weak self] _ in
            subscription.cancel()
            _ = self?.streams.withLock { $0.removeValue(forKey: id) }
            try? bus.send(
                .methodCall(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic, member: "StopNotify", flags: .noReplyExpected))
        }
        do {
            _ = try await central.exchange(
                .methodCall(destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic, member: "StartNotify"),
                doing: "turning on notifications of \(characteristic) of \(identifier)")
        } catch {
            continuation.finish()
            throw error
        }
        if !isLinked { continuation.finish() }
        return stream
    }

    /// BlueZ has no call that measures a link's RSSI: this is `Device1.RSSI`, the last
    /// advertisement's, which a device that stops advertising once connected never updates.
    func rssi() async throws(TetherError) -> Int {
        guard isLinked else { throw TetherError(.peripheralDisconnected, "the link to \(identifier) has ended") }
        let device = central.objects.withLock { $0.properties(devicePath, BlueZNames.device) }
        guard let rssi = BluetoothPeripheral.rssi(device?["RSSI"]?.integerValue.map(Int.init)) else {
            throw TetherError(.gattOperationFailed, "BlueZ has no RSSI for \(identifier) (it reports one only while the device advertises)")
        }
        return rssi
    }

    func maximumValueLength() async -> Int {
        (gatt.withLock { $0.mtu } ?? 23) - 3
    }

    func disconnection() async throws(TetherError) -> BluetoothDisconnection {
        try await ending.value { TetherError(.cancelled, "stopped waiting for the link to end") }
    }
}

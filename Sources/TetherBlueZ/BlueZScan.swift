import Synchronization
import TetherBluetooth
import TetherCore
import TetherDBus

/// Discovery on one adapter: `SetDiscoveryFilter` (LE, the service UUIDs, every advertisement
/// reported), `StartDiscovery`, then the devices BlueZ adds or updates under the adapter as
/// scan results; `StopDiscovery` when the results are dropped.
enum BlueZScan {
    static func start(_ central: BlueZCentral, _ options: BluetoothScanOptions) async throws(TetherError) -> AsyncThrowingStream<BluetoothPeripheral, any Error>
    {
        let adapter = try central.adapterProperties()
        guard adapter["Powered"]?.boolValue == true else {
            throw TetherError(.bluetoothPoweredOff, "the adapter \(central.adapter) is powered off")
        }
        let (stream, continuation) = AsyncThrowingStream<BluetoothPeripheral, any Error>.makeStream()
        let prefix = central.adapterPath + "/dev_"
        let reported = Mutex<[String: BluetoothAdvertisement]>([:])
        let adapterPath = central.adapterPath
        let adapterName = central.adapter
        let watch = central.watch { path in
            guard let path else {
                return continuation.finish(throwing: TetherError(.connectionClosed, "the D-Bus connection to BlueZ closed during the scan"))
            }
            if path == adapterPath {
                let state = BlueZCentral.state(central.objects.withLock { $0.properties(adapterPath, BlueZNames.adapter) })
                if state != .poweredOn {
                    continuation.finish(throwing: TetherError(.bluetoothPoweredOff, "the adapter \(adapterName) stopped: \(state)"))
                }
                return
            }
            // Devices only (their GATT objects lie deeper); filtered again here because devices
            // BlueZ already knew pass its own filter on any change.
            guard path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/"),
                let peripheral = central.objects.withLock({ $0.peripheral(at: path) }), options.admits(peripheral)
            else { return }
            if !options.allowDuplicates {
                let fresh = reported.withLock { seen in
                    defer { seen[path] = peripheral.advertisement }
                    return seen[path] != peripheral.advertisement
                }
                guard fresh else { return }
            }
            continuation.yield(peripheral)
        }
        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .boolean(true)]
        if !options.services.isEmpty { filter["UUIDs"] = .strings(options.services.map(\.uuidString)) }
        _ = try await central.exchange(
            .methodCall(
                destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "SetDiscoveryFilter", body: [.properties(filter)]),
            doing: "setting the scan's filter on \(adapterName)")
        _ = try await central.exchange(
            .methodCall(destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StartDiscovery"),
            doing: "starting a scan on \(adapterName)")
        let bus = central.bus
        continuation.onTermination = { _ in
            watch.cancel()
            try? bus.send(
                .methodCall(
                    destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter, member: "StopDiscovery", flags: .noReplyExpected))
        }
        return stream
    }
}

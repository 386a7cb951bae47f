import NIOCore
import TetherDBus

extension FuzzTargets {
    /// A method call with a rich body, a signal and an error, as the bus would send them.
    public static let dbusSeeds: [[UInt8]] = {
        var call = DBusMessage.methodCall(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", member: "SetDiscoveryFilter",
            body: [.properties(["UUIDs": .strings(["0000aa0a-0000-1000-8000-00805f9b34fb"]), "DuplicateData": .boolean(true), "RSSI": .int16(-90)])])
        call.serial = 3
        var signal = DBusMessage.signal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            body: [
                .objectPath("/org/bluez/hci0/dev_00_11_22_33_44_02"),
                .array(
                    .dictionaryEntry(key: .string, value: .properties),
                    [
                        .dictionaryEntry(
                            .string("org.bluez.Device1"),
                            .properties([
                                "ManufacturerData": .array(
                                    .dictionaryEntry(key: .uint16, value: .variant), [.dictionaryEntry(.uint16(0xFFFF), .variant(.bytes([1, 2, 3])))])
                            ]))
                    ]),
            ])
        signal.serial = 9
        signal.sender = ":1.3"
        var error = call.errorReply("org.bluez.Error.Failed", "Operation failed")
        error.serial = 4
        return [call, signal, error].map { Array(try! $0.bytes().readableBytesView) }
    }()

    /// The D-Bus message reader: nothing crashes, nil never consumes, and a decoded message
    /// encodes to bytes that decode and encode to the same bytes (NaN doubles compare unequal,
    /// so bytes are compared, not values).
    public static func dbus(_ bytes: [UInt8]) -> String? {
        var buffer = ByteBuffer(bytes: bytes)
        while true {
            let before = buffer.readerIndex
            let message: DBusMessage?
            do {
                message = try DBusMessage.read(from: &buffer, maximumLength: 1 << 16)
            } catch {
                return nil
            }
            guard let message else {
                return buffer.readerIndex == before ? nil : "nil result moved the reader index"
            }
            if buffer.readerIndex <= before { return "a message was returned without consuming bytes" }
            guard let encoded = try? message.bytes() else { return "a decoded message does not encode: \(message)" }
            var again = encoded
            guard let reread = try? DBusMessage.read(from: &again), let reencoded = try? reread.bytes() else {
                return "a re-encoded message does not decode: \(message)"
            }
            if reencoded != encoded { return "a message changed on a round trip: \(message)" }
        }
    }
}

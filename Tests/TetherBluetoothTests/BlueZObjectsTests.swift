import Testing
import TetherBluetooth
import TetherDBus

@testable import TetherBlueZ

@Suite("BlueZ's object tree: scan results and why links end")
struct BlueZObjectsTests {
    static let path = "/org/bluez/hci0/dev_C8_47_8C_12_34_56"

    static func objects(rssi: Int16?) -> BlueZObjects {
        var device: [String: DBusValue] = ["Address": .string("C8:47:8C:12:34:56"), "Name": .string("LW003-B"), "Connected": .boolean(false)]
        if let rssi { device["RSSI"] = .int16(rssi) }
        var objects = BlueZObjects()
        objects.added(
            path: path,
            .array(
                .dictionaryEntry(key: .string, value: .array(.dictionaryEntry(key: .string, value: .variant))),
                [
                    .dictionaryEntry(.string(BlueZNames.device), .properties(device))
                ]))
        return objects
    }

    static func connected(_ value: Bool) -> DBusMessage {
        .signal(
            path: path, interface: BlueZNames.properties, member: "PropertiesChanged",
            body: [.string(BlueZNames.device), .properties(["Connected": .boolean(value)]), .strings([])])
    }

    static func disconnected(_ reason: String) -> DBusMessage {
        .signal(path: path, interface: BlueZNames.device, member: "Disconnected", body: [.string(reason), .string("Connection timeout")])
    }

    @Test("an RSSI of 127 is HCI's 'none measured': the result has no RSSI and no scan admits it")
    func unavailableRSSI() throws {
        let heard = try #require(Self.objects(rssi: -61).peripheral(at: Self.path))
        #expect(heard.rssi == -61)
        #expect(BluetoothScanOptions().admits(heard))
        for rssi: Int16? in [127, nil] {
            let unheard = try #require(Self.objects(rssi: rssi).peripheral(at: Self.path))
            #expect(unheard.rssi == nil)
            #expect(!BluetoothScanOptions().admits(unheard))
        }
    }

    @Test(
        "Device1.Disconnected's reason says why the link ended, until the next connection",
        arguments: [
            ("org.bluez.Reason.Remote", BluetoothDisconnection.byDevice), ("org.bluez.Reason.Timeout", .linkLost),
            ("org.bluez.Reason.Authentication", .authenticationFailed), ("org.bluez.Reason.Local", .byApp),
            ("org.bluez.Reason.Suspend", .other("org.bluez.Reason.Suspend (Connection timeout)")),
        ])
    func disconnectionReason(reason: String, expected: BluetoothDisconnection) {
        var objects = Self.objects(rssi: -61)
        #expect(objects.apply(Self.connected(true)) == Self.path)
        #expect(objects.disconnections[Self.path] == nil)
        #expect(objects.apply(Self.disconnected(reason)) == Self.path)
        #expect(objects.apply(Self.connected(false)) == Self.path)
        #expect(objects.disconnections[Self.path] == expected)
        #expect(objects.apply(Self.connected(true)) == Self.path)
        #expect(objects.disconnections[Self.path] == nil)
    }

    @Test("a Disconnected signal without a reason changes nothing; a removed device forgets its reason")
    func malformedAndRemoved() {
        var objects = Self.objects(rssi: -61)
        #expect(objects.apply(.signal(path: Self.path, interface: BlueZNames.device, member: "Disconnected")) == nil)
        #expect(objects.disconnections.isEmpty)
        _ = objects.apply(Self.disconnected("org.bluez.Reason.Remote"))
        objects.removed(path: Self.path, interfaces: [BlueZNames.device])
        #expect(objects.disconnections.isEmpty)
        #expect(objects.peripheral(at: Self.path) == nil)
    }
}

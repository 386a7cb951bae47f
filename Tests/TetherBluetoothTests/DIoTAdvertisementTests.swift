import Testing
import TetherBluetooth
import TetherCore

/// The DIoT advertisement (ble-profiles.md B2): test vector 13 and the simulator's side.
@Suite("DIoT advertisement")
struct DIoTAdvertisementTests {
    static let idBytes = hex("0F 1E 2D 3C 4B 5A 69 78 87 96 A5 B4 C3 D2 E1 F0")

    @Test("vector 13: company 0x04F7 and a name give the device id; no name or a 17th byte do not")
    func vector13() throws {
        let onAir = hex("F7 04 0F 1E 2D 3C 4B 5A 69 78 87 96 A5 B4 C3 D2 E1 F0")
        let company = UInt16(onAir[1]) << 8 | UInt16(onAir[0])
        #expect(company == DIoTAdvertisement.companyIdentifier)
        let payload = Array(onAir.dropFirst(2))
        let advertisement = try #require(DIoTAdvertisement(BluetoothAdvertisement(localName: "DIoT-E1F0", manufacturerData: [company: payload])))
        #expect(advertisement.deviceID.uuidString == "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
        #expect(advertisement.localName == "DIoT-E1F0")
        #expect(DIoTAdvertisement(BluetoothAdvertisement(manufacturerData: [company: payload])) == nil)
        #expect(DIoTAdvertisement(BluetoothAdvertisement(localName: "DIoT-E1F0", manufacturerData: [company: payload + [0x00]])) == nil)
        #expect(DIoTAdvertisement(BluetoothAdvertisement(localName: "DIoT-E1F0", manufacturerData: [0x004C: payload])) == nil)
    }

    @Test("device ids parse from their text and refuse other lengths")
    func deviceID() throws {
        let id = try DIoTDeviceID(bytes: Self.idBytes)
        #expect(try DIoTDeviceID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0") == id)
        #expect(try DIoTDeviceID("0F1E2D3C4B5A69788796A5B4C3D2E1F0") == id)
        #expect("\(id)" == "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
        expectError(.malformedFrame) { try DIoTDeviceID(bytes: Array(Self.idBytes.dropLast())) }
        expectError(.invalidArgument) { try DIoTDeviceID("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1") }
        expectError(.invalidArgument) { try DIoTDeviceID("0F1E2D3C4B5A-6978-8796-A5B4-C3D2E1F0") }
    }

    @Test("the simulator's advertisement is recognised, its bytes are the convention's")
    func simulator() throws {
        let id = try DIoTDeviceID(bytes: Self.idBytes)
        let advertisement = DIoTAdvertisement(deviceID: id, localName: DIoTAdvertisement.defaultName(deviceID: id))
        #expect(advertisement.localName == "DIoT-E1F0")
        #expect(DIoTAdvertisement(advertisement.advertisement()) == advertisement)
        #expect(advertisement.advertisement().serviceUUIDs == [DIoTGATT.commandService])
        #expect(advertisement.advertisingData() == hex("02 01 06 03 03 00 C0 13 FF F7 04") + Self.idBytes)
    }

    @Test("data characteristics map to channels 1…9")
    func dataCharacteristics() throws {
        #expect(DIoTGATT.dataCharacteristics.map(\.description) == (1...9).map { "D00\($0)" })
        #expect(DIoTGATT.dataCharacteristic(channel: 2) == BluetoothUUID(0xD002))
        #expect(DIoTGATT.dataCharacteristic(channel: 0) == nil && DIoTGATT.dataCharacteristic(channel: 10) == nil)
        #expect(DIoTGATT.channel(ofDataCharacteristic: BluetoothUUID(0xD009)) == 9)
        #expect(DIoTGATT.channel(ofDataCharacteristic: BluetoothUUID(0xD000)) == nil)
        #expect(DIoTCommand.Table(characteristic: BluetoothUUID(0xC002)) == .channels)
        #expect(DIoTCommand.Table(characteristic: BluetoothUUID(0xD001)) == nil)
    }
}

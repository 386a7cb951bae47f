import TetherBluetooth
import TetherCore

/// How `tether ble` prints what it finds, for people and as JSON.
enum BLEJSON {
    static func peripheral(_ peripheral: BluetoothPeripheral) -> JSONObject {
        var object: JSONObject = ["address": .string(peripheral.identifier)]
        if let name = peripheral.name { object["name"] = .string(name) }
        if let rssi = peripheral.rssi { object["rssi"] = .int(Int64(rssi)) }
        let advertisement = peripheral.advertisement
        if let power = advertisement.txPower { object["txPower"] = .int(Int64(power)) }
        if !advertisement.serviceUUIDs.isEmpty { object["serviceUUIDs"] = .array(advertisement.serviceUUIDs.map { .string($0.description) }) }
        if !advertisement.manufacturerData.isEmpty {
            var companies = JSONObject()
            for (company, bytes) in advertisement.manufacturerData { companies[String(format4: company)] = .string(bytes.tetherHex) }
            object["manufacturerData"] = .object(companies)
        }
        if !advertisement.serviceData.isEmpty {
            var services = JSONObject()
            for (uuid, bytes) in advertisement.serviceData { services[uuid.description] = .string(bytes.tetherHex) }
            object["serviceData"] = .object(services)
        }
        if let lw003 = LW003Advertisement(advertisement) {
            object["profile"] = "lw003"
            object["lw003"] = .object(Self.lw003(lw003))
        } else if let diot = DIoTAdvertisement(advertisement) {
            object["profile"] = "diot"
            object["diot"] = .object(["deviceID": .string(diot.deviceID.description), "localName": .string(diot.localName)])
        }
        return object
    }

    static func lw003(_ advertisement: LW003Advertisement) -> JSONObject {
        [
            "txPower": .int(Int64(advertisement.txPower)), "batteryPercent": .int(Int64(advertisement.batteryPercent)),
            "batteryMillivolts": .int(Int64(advertisement.batteryMillivolts)), "passwordRequired": .bool(advertisement.passwordRequired),
            "temperature": advertisement.temperature.map(JSONValue.double) ?? .null, "humidity": advertisement.humidity.map(JSONValue.double) ?? .null,
            "mac": .string(advertisement.mac), "deviceType": .int(Int64(advertisement.deviceType)),
        ]
    }

    static func describe(_ peripheral: BluetoothPeripheral) -> String {
        var line = "\(peripheral.identifier) \(peripheral.name ?? "(no name)")"
        if let rssi = peripheral.rssi { line += " \(rssi) dBm" }
        if let lw003 = LW003Advertisement(peripheral.advertisement) {
            line += " LW003-V3 battery \(lw003.batteryPercent)%"
            if let temperature = lw003.temperature { line += " \(temperature) °C" }
            if lw003.passwordRequired { line += " (password)" }
        } else if let diot = DIoTAdvertisement(peripheral.advertisement) {
            line += " DIoT \(diot.deviceID)"
        }
        return line
    }

    static func service(_ service: BluetoothService) -> JSONValue {
        .object([
            "uuid": .string(service.uuid.description),
            "characteristics": .array(
                service.characteristics.map {
                    .object(["uuid": .string($0.id.characteristic.description), "properties": .array($0.properties.bluezFlags.map(JSONValue.string))])
                }),
        ])
    }

    static func value(_ bytes: [UInt8]) -> JSONObject {
        var object: JSONObject = ["hex": .string(bytes.tetherHex)]
        if let text = String(validating: bytes, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" }) {
            object["text"] = .string(text)
        }
        return object
    }
}

extension String {
    /// `FFFF` for a 16-bit company identifier.
    init(format4 value: UInt16) {
        let digits = String(value, radix: 16, uppercase: true)
        self = String(repeating: "0", count: 4 - digits.count) + digits
    }
}

#if canImport(CoreBluetooth)
import CoreBluetooth
import Foundation
import TetherBluetooth
import TetherCore

/// CoreBluetooth's values as Tether's, and back: UUIDs, states, properties, errors and
/// advertisement data. Pure functions; the central and its links call them on the central's queue.
enum CoreBluetoothMapping {
    // MARK: - UUIDs

    /// The tail of the Bluetooth base UUID (`xxxxxxxx-0000-1000-8000-00805F9B34FB`).
    static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// From `CBUUID.data`: 2 bytes (16-bit), 4 (32-bit) or 16, in string order; nil for anything else
    /// that is not a UUID string either.
    static func uuid(_ uuid: CBUUID) -> BluetoothUUID? {
        let bytes = Array(uuid.data)
        switch bytes.count {
        case 2: return BluetoothUUID(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        case 4: return BluetoothUUID(bytes: bytes + baseTail)
        case 16: return BluetoothUUID(bytes: bytes)
        default: return try? BluetoothUUID(uuid.uuidString)
        }
    }

    /// As CoreBluetooth names it: 4 hex digits for a 16-bit UUID on the base, 8 for a 32-bit one,
    /// the 128-bit string otherwise (the three forms `CBUUID(string:)` documents).
    static func cbuuid(_ uuid: BluetoothUUID) -> CBUUID {
        if uuid.short == nil, Array(uuid.bytes[4...]) == baseTail {
            return CBUUID(string: String(uuid.uuidString.prefix(8)))
        }
        return CBUUID(string: uuid.description)
    }

    // MARK: - State

    static func state(_ state: CBManagerState) -> BluetoothState {
        switch state {
        case .unknown: .unknown
        case .resetting: .resetting
        case .unsupported: .unsupported
        case .unauthorized: .unauthorized
        case .poweredOff: .poweredOff
        case .poweredOn: .poweredOn
        @unknown default: .unknown
        }
    }

    /// Why `what` cannot be done in `state` (anything but ``BluetoothState/poweredOn``).
    static func error(_ state: BluetoothState, doing what: String) -> TetherError {
        switch state {
        case .unsupported: TetherError(.bluetoothUnsupported, "\(what): this device has no Bluetooth LE central")
        case .unauthorized: TetherError(.bluetoothUnauthorized, "\(what): the user (or a restriction) did not allow this app to use Bluetooth")
        default: TetherError(.bluetoothPoweredOff, "\(what): Bluetooth is \(state)")
        }
    }

    // MARK: - Characteristics

    /// The declaration's bits are the same on both sides (broadcast 0x01 … extended properties
    /// 0x80); CoreBluetooth's own "encryption required" variants of notify and indicate (0x100,
    /// 0x200) count as notify and indicate.
    static func properties(_ properties: CBCharacteristicProperties) -> BluetoothCharacteristicProperties {
        var result = BluetoothCharacteristicProperties(rawValue: UInt16(truncatingIfNeeded: properties.rawValue & 0xFF))
        if properties.contains(.notifyEncryptionRequired) { result.insert(.notify) }
        if properties.contains(.indicateEncryptionRequired) { result.insert(.indicate) }
        return result
    }

    // MARK: - Errors

    /// Why a link ended (or never came up, `connecting`), from the error CoreBluetooth gave;
    /// `closing` is the reason the app cancelled the connection with, if it did.
    static func disconnection(_ error: (any Error)?, closing: BluetoothDisconnection?, connecting: Bool = false) -> BluetoothDisconnection {
        if let error = error as? CBError {
            switch error.code {
            case .connectionTimeout: return connecting ? .timeout : .linkLost
            case .peerRemovedPairingInformation, .encryptionTimedOut: return .authenticationFailed
            default: break
            }
        } else if let error = error as? CBATTError {
            switch error.code {
            case .insufficientAuthentication, .insufficientEncryption, .insufficientEncryptionKeySize: return .authenticationFailed
            default: break
            }
        }
        return closing ?? .byDevice
    }

    /// A failed GATT operation (discovery, read, write, notifications) as a typed error.
    static func gattError(_ error: any Error, doing what: String) -> TetherError {
        let text = "\(what): \(error.localizedDescription.prefix(200))"
        if let error = error as? CBATTError {
            switch error.code {
            case .readNotPermitted, .writeNotPermitted, .requestNotSupported, .insufficientAuthentication, .insufficientAuthorization,
                .insufficientEncryption, .insufficientEncryptionKeySize:
                return TetherError(.gattOperationNotPermitted, "\(text) (ATT error \(error.code.rawValue))")
            default:
                return TetherError(.gattOperationFailed, "\(text) (ATT error \(error.code.rawValue))")
            }
        }
        if let error = error as? CBError {
            switch error.code {
            case .notConnected, .peripheralDisconnected: return TetherError(.peripheralDisconnected, text)
            case .operationNotSupported: return TetherError(.gattOperationNotPermitted, text)
            default: return TetherError(.gattOperationFailed, text)
            }
        }
        return TetherError(.gattOperationFailed, text)
    }

    // MARK: - Advertisements

    /// A scan result: the advertised name before the one the system remembers; an RSSI of 127
    /// is CoreBluetooth's "not available".
    static func peripheral(_ peripheral: CBPeripheral, advertisementData: [String: Any], rssi: NSNumber) -> BluetoothPeripheral {
        let advertisement = advertisement(advertisementData)
        let rssi = rssi.intValue
        return BluetoothPeripheral(
            identifier: peripheral.identifier.uuidString, name: advertisement.localName ?? peripheral.name, rssi: BluetoothPeripheral.rssi(rssi),
            advertisement: advertisement)
    }

    /// The advertisement data dictionary of `centralManager(_:didDiscover:advertisementData:rssi:)`.
    /// CoreBluetooth reports one manufacturer data block: its first two bytes are the company
    /// identifier (little-endian), the rest its data. Service UUIDs include those of the overflow area.
    static func advertisement(_ data: [String: Any]) -> BluetoothAdvertisement {
        var advertisement = BluetoothAdvertisement()
        advertisement.localName = data[CBAdvertisementDataLocalNameKey] as? String
        advertisement.txPower = (data[CBAdvertisementDataTxPowerLevelKey] as? NSNumber)?.intValue
        for key in [CBAdvertisementDataServiceUUIDsKey, CBAdvertisementDataOverflowServiceUUIDsKey] {
            for cbuuid in data[key] as? [CBUUID] ?? [] {
                guard let uuid = uuid(cbuuid), !advertisement.serviceUUIDs.contains(uuid) else { continue }
                advertisement.serviceUUIDs.append(uuid)
            }
        }
        if let manufacturer = data[CBAdvertisementDataManufacturerDataKey] as? Data, manufacturer.count >= 2 {
            let bytes = Array(manufacturer)
            advertisement.manufacturerData[UInt16(bytes[0]) | UInt16(bytes[1]) << 8] = Array(bytes[2...])
        }
        for (key, value) in data[CBAdvertisementDataServiceDataKey] as? [CBUUID: Data] ?? [:] {
            guard let uuid = uuid(key) else { continue }
            advertisement.serviceData[uuid] = Array(value)
        }
        advertisement.isConnectable = (data[CBAdvertisementDataIsConnectable] as? NSNumber)?.boolValue
        return advertisement
    }
}
#endif

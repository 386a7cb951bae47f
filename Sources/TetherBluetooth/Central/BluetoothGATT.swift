/// What a characteristic allows, from its declaration.
public struct BluetoothCharacteristicProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)

    /// BlueZ's `Flags` names, in the order of the bits above.
    static let bluezNames: [(String, Self)] = [
        ("broadcast", .broadcast), ("read", .read), ("write-without-response", .writeWithoutResponse), ("write", .write),
        ("notify", .notify), ("indicate", .indicate), ("authenticated-signed-writes", .authenticatedSignedWrites),
        ("extended-properties", .extendedProperties),
    ]

    /// From BlueZ's `Flags` (`["read", "notify"]`); names it does not know are left out.
    public init(bluezFlags: [String]) {
        var properties: Self = []
        for (name, property) in Self.bluezNames where bluezFlags.contains(name) { properties.insert(property) }
        self = properties
    }

    /// As BlueZ's `Flags`.
    public var bluezFlags: [String] {
        Self.bluezNames.filter { contains($0.1) }.map(\.0)
    }
}

/// A characteristic, named by its service and its own UUID: a profile may reuse a UUID for a
/// service and one of its characteristics (LW003-V3's `AA00`), so the pair is what identifies it.
public struct BluetoothCharacteristicID: Hashable, Sendable, CustomStringConvertible {
    public var service: BluetoothUUID
    public var characteristic: BluetoothUUID

    public init(service: BluetoothUUID, characteristic: BluetoothUUID) {
        self.service = service
        self.characteristic = characteristic
    }

    public var description: String { "\(service)/\(characteristic)" }
}

/// A characteristic as discovered.
public struct BluetoothCharacteristic: Hashable, Sendable {
    public var id: BluetoothCharacteristicID
    public var properties: BluetoothCharacteristicProperties

    public init(id: BluetoothCharacteristicID, properties: BluetoothCharacteristicProperties) {
        self.id = id
        self.properties = properties
    }
}

/// A primary service as discovered, with its characteristics.
public struct BluetoothService: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var characteristics: [BluetoothCharacteristic]

    public init(uuid: BluetoothUUID, characteristics: [BluetoothCharacteristic]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// How to write a characteristic's value.
public enum BluetoothWriteType: String, Hashable, Sendable {
    /// The peripheral acknowledges the write (ATT Write Request).
    case withResponse
    /// No acknowledgement (ATT Write Command): faster, and nothing says it arrived.
    case withoutResponse
}

public import Foundation
public import TetherCore

/// Files that ship with the repository, for tests.
public enum Fixtures {
    /// The repository's root directory.
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    public static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(relativePath)))
    }

    /// The Gizwits "pet house" product of `shared/reference/gizwits-lan.md` §9.
    public static func petHouse() throws -> ThingModel {
        try ThingModel(gizwitsJSON: bytes("products/pet-house.json"))
    }

    /// The Aliyun TSL lamp product.
    public static func lamp() throws -> ThingModel {
        try ThingModel(tslJSON: bytes("products/lamp-tsl.json"))
    }

    /// The state used by the worked example of the reference.
    public static let petHouseState: [String: DataValue] = [
        "LED_OnOff": .bool(true), "LED_Color": .int(2), "LED_R": .int(10), "LED_G": .int(20), "LED_B": .int(30),
        "Motor_Speed": .int(-2), "Infrared": .bool(true), "Temperature": .int(25), "Humidity": .int(60),
        "Alert_1": .bool(false), "Alert_2": .bool(true),
        "Fault_LED": .bool(false), "Fault_Motor": .bool(true), "Fault_TemHum": .bool(false), "Fault_IR": .bool(true),
    ]
}

extension Array where Element == UInt8 {
    /// Bytes from spaced hex, for test vectors: `hex("00 00 00 03")`.
    public static func hex(_ text: String) -> [UInt8] {
        guard let bytes = [UInt8](tetherHex: text) else { fatalError("bad hex in a test vector: \(text)") }
        return bytes
    }
}

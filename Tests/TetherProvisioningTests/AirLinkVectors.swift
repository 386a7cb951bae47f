import TetherCore
import TetherProvisioning
import TetherTestSupport

/// `Tests/Fixtures/airlink-vectors.json`: the reference's smart-config vectors, made by the
/// vendors' own encoders (`shared/reference/airlink-vectors.json`).
struct AirLinkVectors {
    let document: JSONValue

    init() throws {
        document = try JSONValue.parse(try Fixtures.bytes("Tests/Fixtures/airlink-vectors.json"))
    }

    func cases(_ kind: String) -> [JSONValue] { document[kind]?.arrayValue ?? [] }

    static func bytes(_ vector: JSONValue, _ key: String) -> [UInt8] {
        [UInt8](tetherHex: vector[key]?.stringValue ?? "") ?? []
    }

    static func ints(_ value: JSONValue?) -> [Int] {
        (value?.arrayValue ?? []).compactMap { $0.numberValue.map { Int($0) } }
    }

    static func mac(_ text: String?) -> [UInt8] {
        (text ?? "").split(separator: ":").compactMap { UInt8($0, radix: 16) }
    }

    static func ipv4(_ text: String?) -> [UInt8] {
        (text ?? "").split(separator: ".").compactMap { UInt8($0) }
    }

    static func credentials(_ vector: JSONValue) throws -> SmartConfigCredentials {
        try SmartConfigCredentials(
            ssid: bytes(vector, "ssid_hex"), password: bytes(vector, "password_hex"),
            bssid: vector["bssid"]?.stringValue.map { mac($0) } ?? [0, 0, 0, 0, 0, 0])
    }
}

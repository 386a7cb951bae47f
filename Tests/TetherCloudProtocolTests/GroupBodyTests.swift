import Testing
import TetherCore

@testable import TetherCloudProtocol

@Suite("Group bodies: read or refused, never a crash")
struct GroupBodyTests {
    @Test("arbitrary group, membership and result bodies are read or refused; what is read writes back the same (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_125)
        let keys = ["group_name", "product_key", "dids", "success", "failed", "detail", "did", "result", "command_id", "error_code", "id", "verbose_name"]
        let values: [JSONValue] = [
            "g", "", "pk", .string(String(repeating: "n", count: 65)), ["d1", "d2"], ["d1", ""], [.int(1)], .array([]), [["did": "d1", "error_code": 9017]],
            .int(0), .int(9042), .bool(true), .bool(false), .null, [:],
        ]
        for _ in 0..<3_000 {
            var object: JSONObject = [:]
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                object[keys.randomElement(using: &generator)!] = values.randomElement(using: &generator)!
            }
            let json = JSONValue.object(object)
            if let fields = try? GroupFieldsBody(json: json) { #expect((try? GroupFieldsBody(json: fields.json)) == fields) }
            if let dids = try? GroupDidsBody(json: json) { #expect((try? GroupDidsBody(json: dids.json)) == dids) }
            if let result = try? GroupDevicesResultBody(json: json) { #expect((try? GroupDevicesResultBody(json: result.json(detail: true))) == result) }
            if let control = try? GroupControlResultBody(json: json) { #expect((try? GroupControlResultBody(json: control.json)) == control) }
            _ = try? GroupBody(json: json)
            _ = try? GroupDeviceBody(json: json)
        }
    }
}

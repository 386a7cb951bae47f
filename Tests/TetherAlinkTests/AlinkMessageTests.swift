import Testing
import TetherAlink
import TetherCore
import TetherTestSupport

@Suite("Alink payloads and the thing model")
struct AlinkMessageTests {
    @Test("a post of the reference reads, and its reply carries code, data and message")
    func post() throws {
        let request = try AlinkRequest(parsing: Array(#"{"id": "1", "version": "1.0", "params": {"LightSwitch": 1}, "method": "thing.event.property.post"}"#.utf8))
        #expect(request.id == "1")
        #expect(request.method == "thing.event.property.post")
        #expect(request.params == ["LightSwitch": 1])
        let reply = try JSONValue.parse(request.reply().bytes)
        #expect(reply["id"] == "1")
        #expect(reply["code"] == 200)
        #expect(reply["data"] == .object([:]))
        #expect(reply["message"] == "success")
    }

    @Test("numeric ids are read as their decimal text")
    func numericID() throws {
        #expect(try AlinkRequest(parsing: Array(#"{"id": 42, "params": {}}"#.utf8)).id == "42")
        #expect(try AlinkReply(parsing: Array(#"{"id": 7, "code": 200}"#.utf8)).id == "7")
    }

    @Test("malformed payloads are refused with malformedPayload", arguments: [
        "", "null", "[]", "{", #"{"params": {}}"#, #"{"id": true}"#, #"{"id": ""}"#, #"{"id": 1.5}"#,
        "\u{FF}\u{FE}", #"{"id": "\#(String(repeating: "9", count: 65))"}"#,
    ])
    func malformed(text: String) {
        #expect(throws: TetherError.self) { try AlinkRequest(parsing: Array(text.utf8)) }
    }

    @Test("a reply needs an integer code")
    func replyCode() {
        #expect(throws: TetherError.self) { try AlinkReply(parsing: Array(#"{"id": "1"}"#.utf8)) }
        #expect(throws: TetherError.self) { try AlinkReply(parsing: Array(#"{"id": "1", "code": "ok"}"#.utf8)) }
        #expect(throws: TetherError.self) { try AlinkReply(parsing: Array(#"{"id": "1", "code": 2.5}"#.utf8)) }
    }

    @Test("payloads beyond the size limit are refused before parsing")
    func sizeLimit() {
        let big = Array(#"{"id":"1","params":{"Label":""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 300_000) + Array(#""}}"#.utf8)
        #expect(throws: TetherError.self) { try AlinkRequest(parsing: big) }
    }

    @Test("a post is checked point by point: good values kept, bad ones named")
    func checkProperties() throws {
        let lamp = try Fixtures.lamp()
        let check = lamp.checkAlinkProperties([
            "LightSwitch": 1, "Brightness": ["value": 40, "time": 1_700_000_000_000], "WorkMode": 2,
            "ColorTemperature": 9000, "Nope": 1, "Label": 5,
        ])
        #expect(check.accepted == ["LightSwitch": .bool(true), "Brightness": .int(40), "WorkMode": .int(2)])
        let rejected = Dictionary(uniqueKeysWithValues: check.rejected.map { ($0.name, $0.error.code) })
        #expect(rejected == ["ColorTemperature": .valueOutOfRange, "Nope": .unknownDataPoint, "Label": .wrongValueType])
        #expect(lamp.checkAlinkProperties("not an object").rejected.count == 1)
    }

    @Test("values go to devices as the TSL writes them")
    func params() throws {
        let lamp = try Fixtures.lamp()
        #expect(lamp.alinkParams(["LightSwitch": .bool(true), "WorkMode": .int(1), "Label": .string("x")]) == ["Label": "x", "LightSwitch": 1, "WorkMode": 1])
    }

    @Test("fuzzing payloads, topics and client ids (bounded)", arguments: [UInt64(1), 2])
    func fuzz(seed: UInt64) {
        if let failure = FuzzTargets.run(iterations: 5_000, seed: seed, seeds: FuzzTargets.alinkSeeds, target: FuzzTargets.alink) {
            Issue.record("\(failure.problem) for input \(failure.input.tetherHex)")
        }
    }

    @Test("the fuzz seeds are valid")
    func seeds() {
        for seed in FuzzTargets.alinkSeeds { #expect(FuzzTargets.alink(seed) == nil) }
    }
}

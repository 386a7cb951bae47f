import Foundation
import Testing
import TetherCore
import TetherTestSupport

@Suite("JSON parser (RFC 8259, strict)")
struct JSONParserTests {
    static func parse(_ text: String) throws(TetherError) -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    /// Foundation's decoder, which `JSONValue.parse` replaced: the reference the parser agrees with.
    static func foundation(_ bytes: [UInt8]) -> JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) }

    @Test("values, escapes, numbers and document order")
    func vectors() throws {
        #expect(try Self.parse(#" {"b": [1, -2, 3.5, 1e2, true, false, null], "a": {"x": "y"}} "#) == ["b": [1, -2, .double(3.5), 100, true, false, .null], "a": ["x": "y"]])
        #expect(try Self.parse(#"{"z":1,"a":2,"m":3}"#).objectValue?.keys == ["z", "a", "m"])
        #expect(try Self.parse(#"{"k":1,"k":2}"#) == ["k": 2])
        #expect(try Self.parse(#""\"\\\/\b\f\n\r\t\u00e9\u4e2d\ud83d\ude00""#) == .string("\"\\/\u{08}\u{0C}\n\r\t\u{e9}\u{4e2d}\u{1F600}"))
        #expect(try Self.parse("\"h\u{e9}llo \u{4e2d}\"") == .string("h\u{e9}llo \u{4e2d}"))
        #expect(try Self.parse("9223372036854775807") == .int(.max))
        #expect(try Self.parse("-9223372036854775808") == .int(.min))
        #expect(try Self.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try Self.parse("0") == .int(0) && (try Self.parse("-0")) == .int(0))
        #expect(try Self.parse("1.0") == .int(1) && (try Self.parse("2.5e-1")) == .double(0.25))
        #expect(try Self.parse("[]") == .array([]) && (try Self.parse("{}")) == .object([:]))
    }

    @Test("malformed documents are refused with where they went wrong", arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\"}", "{a:1}", "01", "-", "1.", "1e", "+1", ".5", "tru", "nul", "[1 2]", "\"abc", "\"\\x\"",
        "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "1 2", "1e400", "NaN", "'a'", "[1]x",
    ])
    func malformed(_ text: String) {
        #expect(throws: TetherError.self, "\(text)") { try Self.parse(text) }
    }

    @Test("bytes that are not UTF-8 and nesting beyond the limit are refused")
    func limits() throws {
        #expect(throws: TetherError.self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: TetherError.self) { try JSONValue.parse([0x22, 0xC3, 0x22]) }
        let deep = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try Self.parse(deep) != .null)
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: TetherError.self) { try Self.parse(tooDeep) }
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: TetherError.self) { try Self.parse(hostile) }
    }

    static let seeds: [[UInt8]] = [
        #"{"id":"1","version":"1.0","params":{"LightSwitch":1,"Brightness":{"value":40.5,"time":1}},"method":"thing.event.property.post"}"#,
        #"[1,-2,3.25,1e3,-0.5E-2,true,false,null,"\u00e9\n",{"a":[{}]}]"#,
        #"{"cmd":"c2s_write","data":{"did":"abc","attrs":{"x":-9223372036854775808}}}"#,
        "\"h\u{e9}llo \u{1F600}\"",
    ].map { Array($0.utf8) }

    @Test("agrees with Foundation's decoder on arbitrary input, but for trailing commas")
    func differential() {
        let failure = FuzzTargets.run(iterations: 20_000, seed: 0x4A53_4F4E, seeds: Self.seeds) { bytes in
            let ours = try? JSONValue.parse(bytes)
            let theirs = Self.foundation(bytes)
            // Foundation accepts a trailing comma, which RFC 8259 does not: the one leniency we drop.
            if ours == nil, theirs != nil {
                let compact = bytes.filter { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
                let trailingComma = zip(compact, compact.dropFirst()).contains { $0 == UInt8(ascii: ",") && ($1 == UInt8(ascii: "}") || $1 == UInt8(ascii: "]")) }
                return trailingComma ? nil : "refused what Foundation accepts"
            }
            guard ours == theirs else { return "parser: \(ours?.serialized() ?? "refused"), Foundation: \(theirs?.serialized() ?? "refused")" }
            if let ours, (try? JSONValue.parse(Array(ours.serialized().utf8))) != ours { return "a value changed on a round trip" }
            return nil
        }
        if let failure { Issue.record("\(failure.problem) for \(String(decoding: failure.input, as: UTF8.self)) (\(failure.input))") }
    }
}

import Testing
import TetherCore

@testable import TetherCloudProtocol

@Suite("Rule bodies: the reference's fields and notation, refusals naming the field, fuzzed")
struct RuleBodyTests {
    static let valid: JSONObject = [
        "name": "Hot", "did": "d1", "product_key": "pk", "event": "alert", "event_attr": ["attr_name": "Alert_1", "value": "0"], "interval": "60",
        "input": [["did": "d1", "product_key": "pk", "prefix": "device1"], ["did": "d2", "product_key": "pk", "prefix": "d2"]],
        "condition": [
            [["left": "device1.Temperature", "opt": ">=", "right": "30.5"], ["left": "d2.Mode", "opt": "==", "right": "'night'"]],
            [["left": 1, "opt": "!=", "right": "device1.Switch"]],
        ],
        "output": [
            [["type": "devctrl", "did": "d2", "attrs": ["Switch": true]], ["type": "delay", "delay": 10]],
            [["type": "devctrl", "did": "d3", "raw": [1, 2, 255]]],
        ],
    ]

    @Test("a rule reads and writes back; operands in the reference's notation")
    func roundTrip() throws {
        let fields = try RuleFieldsBody(json: .object(Self.valid))
        #expect(fields.event == .alert && fields.eventAttr == RuleEventAttr(name: "Alert_1", occurs: false) && fields.interval == 60)
        #expect(fields.inputs.map(\.prefix) == ["device1", "d2"])
        #expect(
            fields.conditions == [
                [
                    RuleComparison(.reference(prefix: "device1", name: "Temperature"), .greaterOrEqual, .number(30.5)),
                    RuleComparison(.reference(prefix: "d2", name: "Mode"), .equal, .string("night")),
                ],
                [RuleComparison(.number(1), .notEqual, .reference(prefix: "device1", name: "Switch"))],
            ])
        #expect(fields.outputs == [[.control(did: "d2", .attrs(["Switch": true])), .delay(seconds: 10)], [.control(did: "d3", .raw([1, 2, 255]))]])
        #expect(try RuleFieldsBody(json: fields.json) == fields)
        let rule = RuleBody(id: "rl_1", fields: fields, createdAt: 1, updatedAt: 2, lastFiredAt: 3)
        #expect(try RuleBody(json: rule.json) == rule)
        let param = RuleParamBody(name: "Mode", displayName: "Mode", type: "enum", labels: ["a", "b"])
        #expect(try RuleParamBody(json: param.json) == param)

        #expect(RuleOperand(parsing: "'1'") == .string("1") && RuleOperand(parsing: "1") == .number(1) && RuleOperand(parsing: "-2.5e3") == .number(-2500))
        #expect(
            RuleOperand(parsing: "a.b.c") == .reference(prefix: "a", name: "b.c") && RuleOperand(parsing: "nope") == nil && RuleOperand(parsing: ".x") == nil)
        #expect(RuleOperand(parsing: "1x.y") == nil && RuleOperand(parsing: "1.e5") == .number(100_000))
        #expect(RuleOperand.number(30).description == "30" && RuleOperand.number(0.5).description == "0.5")
        // An alert or fault rule watches occurrences unless told otherwise; a data rule has no attribute.
        var occurs = Self.valid
        occurs["event_attr"] = ["attr_name": "Alert_1"]
        #expect(try RuleFieldsBody(json: .object(occurs)).eventAttr?.occurs == true)
        occurs["event"] = "data"
        #expect(try RuleFieldsBody(json: .object(occurs)).eventAttr == nil)
    }

    @Test("bad rules are refused naming the field")
    func refusals() {
        func with(_ key: String, _ value: JSONValue?) -> JSONValue {
            var body = Self.valid
            body[key] = value
            return .object(body)
        }
        let cases: [(JSONValue, String)] = [
            (with("name", nil), "name"), (with("event", "boom"), "event"), (with("event_attr", nil), "event_attr"),
            (with("event_attr", ["attr_name": "A", "value": "2"]), "event_attr.value"), (with("interval", -5), "interval"),
            (with("input", [["did": "d1", "product_key": "pk", "prefix": "bad prefix"]]), "input[0].prefix"),
            (with("input", [["did": "d1", "product_key": "pk", "prefix": "p"], ["did": "d2", "product_key": "pk", "prefix": "p"]]), "input"),
            (with("condition", [[["left": "nobody.x", "opt": ">", "right": "1"]]]), "condition[0][0].left"),
            (with("condition", [[["left": "device1.x", "opt": "=~", "right": "1"]]]), "condition[0][0].opt"),
            (with("condition", [[["left": "device1.x", "opt": "<", "right": "'a'"]]]), "condition[0][0].opt"),
            (with("condition", [[["left": "1", "opt": "<", "right": "2"]]]), "condition[0][0].left"),
            (with("condition", [[["left": "'a'", "opt": "==", "right": "1"]]]), "condition[0][0].left"),
            (with("input", [["did": "d1", "product_key": "pk", "prefix": "1st"]]), "input[0].prefix"),
            (with("condition", [[]]), "condition[0]"), (with("condition", "x"), "condition"),
            (with("output", nil), "output"), (with("output", []), "output"),
            (with("output", [[["type": "delay", "delay": 0]]]), "output[0][0].delay"),
            (with("output", [[["type": "devctrl", "did": "d", "raw": [256]]]]), "output[0][0].raw"),
            (with("output", [[["type": "devctrl", "did": "d"]]]), "output[0][0].attrs"),
            (with("output", [[["type": "wait"]]]), "output[0][0].type"),
        ]
        for (json, field) in cases {
            do throws(CloudBodyError) {
                _ = try RuleFieldsBody(json: json)
                Issue.record("read: \(json.serialized())")
            } catch {
                #expect(error.field == field, "\(json.serialized()): \(error)")
            }
        }
    }

    @Test("arbitrary rule bodies are read or refused, never a crash; what is read writes back the same (bounded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 20_261_126)
        let keys = ["name", "did", "product_key", "event", "event_attr", "interval", "input", "condition", "output", "remark"]
        let values: [JSONValue] = [
            "x", "", "data", "alert", "online", "60", .int(0), .int(-1), .int(Int64.max), .double(0.5), .bool(true), .null, [:], .array([]),
            ["attr_name": "A", "value": "1"], [["did": "d", "product_key": "p", "prefix": "p"]],
            [[["left": "p.x", "opt": ">", "right": "1"]]], [[["left": "'s'", "opt": "==", "right": "p.y"]]], [[["left": "1e400", "opt": "<", "right": "p.x"]]],
            [[["type": "delay", "delay": 5]]], [[["type": "devctrl", "did": "d", "attrs": ["a": 1]]]], [[["type": "devctrl", "did": "d", "raw": [0, 255]]]],
        ]
        var read = 0
        for _ in 0..<3_000 {
            var object: JSONObject = ["name": "r", "did": "d", "product_key": "p", "event": "data", "output": [[["type": "delay", "delay": 1]]]]
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                object[keys.randomElement(using: &generator)!] = values.randomElement(using: &generator)!
            }
            guard let fields = try? RuleFieldsBody(json: .object(object)) else { continue }
            read += 1
            #expect((try? RuleFieldsBody(json: fields.json)) == fields, "\(JSONValue.object(object).serialized())")
        }
        #expect(read > 100)
    }
}

public import TetherCore

/// What sets a rule off (reference §2.7): its device coming online or going offline, an alert
/// or a fault starting or ending, or a report of its data.
public enum RuleEvent: String, Sendable, Hashable, CaseIterable {
    case online, offline, alert, fault, data
}

/// Which alert or fault a rule watches (`event_attr`), and which way: `occurs` for a 0→1
/// transition (`"1"`), false for the 1→0 recovery (`"0"`).
public struct RuleEventAttr: Sendable, Hashable {
    public var name: String
    public var occurs: Bool

    public init(name: String, occurs: Bool = true) {
        self.name = name
        self.occurs = occurs
    }
}

/// A device whose data the rule's conditions read, as `<prefix>.<data point>`.
public struct RuleInput: Sendable, Hashable {
    public var did: String
    public var productKey: String
    public var prefix: String

    public init(did: String, productKey: String, prefix: String) {
        self.did = did
        self.productKey = productKey
        self.prefix = prefix
    }
}

/// One side of a comparison: an input's data point, a number (`"1"`), or a string (`"'1'"`).
public enum RuleOperand: Sendable, Hashable, CustomStringConvertible {
    case reference(prefix: String, name: String)
    case number(Double)
    case string(String)

    /// Reads the reference's notation; nil when it is none of the three.
    public init?(parsing text: String) {
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            self = .string(String(text.dropFirst().dropLast()))
        } else if let number = Double(text), number.isFinite, !text.contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }) {
            self = .number(number)
        } else if let dot = text.firstIndex(of: "."), let first = text.first, first.isLetter || first == "_", text.index(after: dot) != text.endIndex {
            self = .reference(prefix: String(text[..<dot]), name: String(text[text.index(after: dot)...]))
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .reference(let prefix, let name): "\(prefix).\(name)"
        case .number(let number): number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .string(let text): "'\(text)'"
        }
    }
}

/// `opt`: numbers compare with all six; strings with `==` and `!=`.
public enum RuleOperator: String, Sendable, Hashable, CaseIterable {
    case greater = ">"
    case greaterOrEqual = ">="
    case less = "<"
    case lessOrEqual = "<="
    case equal = "=="
    case notEqual = "!="
}

/// `{left, opt, right}`.
public struct RuleComparison: Sendable, Hashable {
    public var left: RuleOperand
    public var op: RuleOperator
    public var right: RuleOperand

    public init(_ left: RuleOperand, _ op: RuleOperator, _ right: RuleOperand) {
        self.left = left
        self.op = op
        self.right = right
    }
}

/// A step of an output group: write to a device (data points as a control writes them, enums by
/// label; or bytes), or wait.
public enum RuleStep: Sendable, Hashable {
    case control(did: String, RuleCommand)
    case delay(seconds: Int64)
}

/// What a rule's control step sends: data points, or transparent bytes (a byte array, as
/// controls have them).
public enum RuleCommand: Sendable, Hashable {
    case attrs(JSONObject)
    case raw([UInt8])
}

/// A rule as apps write it (`POST /app/rules`, `PUT /app/rules/{rule_id}`).
public struct RuleFieldsBody: Sendable, Hashable {
    public var name: String
    public var remark: String
    public var did: String
    public var productKey: String
    public var event: RuleEvent
    public var eventAttr: RuleEventAttr?
    /// Minimum seconds between firings (0: no minimum).
    public var interval: Int64
    public var inputs: [RuleInput]
    /// Groups of comparisons: the rule fires when every comparison of any group holds (or when
    /// there are none).
    public var conditions: [[RuleComparison]]
    /// Groups of steps run side by side, each in order; a step that fails ends its group.
    public var outputs: [[RuleStep]]

    public static let maximumName = 64
    public static let maximumRemark = 256
    public static let maximumInputs = 20
    public static let maximumGroups = 10
    public static let maximumComparisons = 20
    public static let maximumSteps = 20
    public static let maximumInterval: Int64 = 86_400 * 30

    public init(
        name: String, remark: String = "", did: String, productKey: String, event: RuleEvent, eventAttr: RuleEventAttr? = nil, interval: Int64 = 0,
        inputs: [RuleInput] = [], conditions: [[RuleComparison]] = [], outputs: [[RuleStep]]
    ) {
        self.name = name
        self.remark = remark
        self.did = did
        self.productKey = productKey
        self.event = event
        self.eventAttr = eventAttr
        self.interval = interval
        self.inputs = inputs
        self.conditions = conditions
        self.outputs = outputs
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        let name = try reader.text("name")
        guard name.utf8.count <= Self.maximumName else { throw CloudBodyError(field: "name", "must be at most \(Self.maximumName) bytes") }
        let remark = try reader.optionalString("remark") ?? ""
        guard remark.utf8.count <= Self.maximumRemark else { throw CloudBodyError(field: "remark", "must be at most \(Self.maximumRemark) bytes") }
        let did = try Self.identifier(reader, "did")
        let productKey = try Self.identifier(reader, "product_key")
        guard let event = RuleEvent(rawValue: try reader.text("event")) else {
            throw CloudBodyError(field: "event", "must be one of \(RuleEvent.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var eventAttr: RuleEventAttr?
        if event == .alert || event == .fault {
            guard let object = try reader.optionalObject("event_attr") else { throw CloudBodyError(field: "event_attr", "is required for \(event.rawValue)") }
            let attr = BodyReader(object: object, path: "event_attr.")
            let value = try attr.optionalString("value") ?? "1"
            guard value == "1" || value == "0" else { throw CloudBodyError(field: "event_attr.value", "must be \"1\" (occurs) or \"0\" (recovers)") }
            eventAttr = RuleEventAttr(name: try attr.text("attr_name"), occurs: value == "1")
        }
        let interval = try reader.lenientInt("interval") ?? 0
        guard (0...Self.maximumInterval).contains(interval) else { throw CloudBodyError(field: "interval", "must be 0 to \(Self.maximumInterval) seconds") }
        let inputs = try reader.list("input", maximum: Self.maximumInputs).map { item throws(CloudBodyError) in
            RuleInput(did: try Self.identifier(item, "did"), productKey: try Self.identifier(item, "product_key"), prefix: try Self.prefix(item))
        }
        guard Set(inputs.map(\.prefix)).count == inputs.count else { throw CloudBodyError(field: "input", "prefixes must differ") }
        let conditions = try Self.groups(reader, "condition", maximum: Self.maximumComparisons) { item throws(CloudBodyError) in
            guard let op = RuleOperator(rawValue: try item.text("opt")) else {
                throw CloudBodyError(field: item.name("opt"), "must be one of \(RuleOperator.allCases.map(\.rawValue).joined(separator: " "))")
            }
            let left = try Self.operand(item, "left")
            let right = try Self.operand(item, "right")
            let reads = [left, right].contains { if case .reference = $0 { true } else { false } }
            guard reads else { throw CloudBodyError(field: item.name("left"), "or right must read data") }
            if op != .equal && op != .notEqual, [left, right].contains(where: { if case .string = $0 { true } else { false } }) {
                throw CloudBodyError(field: item.name("opt"), "compares strings with == and != only")
            }
            for operand in [left, right] {
                if case .reference(let prefix, _) = operand, !inputs.contains(where: { $0.prefix == prefix }) {
                    throw CloudBodyError(field: item.name("left"), "reads \(operand), and no input has the prefix \(prefix)")
                }
            }
            return RuleComparison(left, op, right)
        }
        let outputs = try Self.groups(reader, "output", maximum: Self.maximumSteps) { item throws(CloudBodyError) in try Self.step(item) }
        guard !outputs.isEmpty else { throw CloudBodyError(field: "output", "must hold at least one group") }
        self.init(
            name: name, remark: remark, did: did, productKey: productKey, event: event, eventAttr: eventAttr, interval: interval, inputs: inputs,
            conditions: conditions, outputs: outputs)
    }

    private static func identifier(_ reader: BodyReader, _ key: String) throws(CloudBodyError) -> String {
        let text = try reader.text(key)
        guard text.utf8.count <= 64 else { throw CloudBodyError(field: reader.name(key), "must be at most 64 bytes") }
        return text
    }

    private static func prefix(_ reader: BodyReader) throws(CloudBodyError) -> String {
        let prefix = try reader.text("prefix")
        guard prefix.utf8.count <= 32, prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
            prefix.first?.isNumber == false
        else {
            throw CloudBodyError(field: reader.name("prefix"), "must be 1 to 32 letters, digits or _, not starting with a digit")
        }
        return prefix
    }

    private static func operand(_ reader: BodyReader, _ key: String) throws(CloudBodyError) -> RuleOperand {
        let text: String
        switch reader.value(key) {
        case .string(let value)?: text = value
        case .int(let number)?: return .number(Double(number))
        case .double(let number)? where number.isFinite: return .number(number)
        default: throw CloudBodyError(field: reader.name(key), "must be prefix.name, a number, or a 'string'")
        }
        guard text.utf8.count <= 256, let operand = RuleOperand(parsing: text) else {
            throw CloudBodyError(field: reader.name(key), "must be prefix.name, a number, or a 'string'")
        }
        return operand
    }

    private static func step(_ reader: BodyReader) throws(CloudBodyError) -> RuleStep {
        switch try reader.text("type") {
        case "delay":
            guard let seconds = try reader.lenientInt("delay"), (1...3600).contains(seconds) else {
                throw CloudBodyError(field: reader.name("delay"), "must be 1 to 3600 seconds")
            }
            return .delay(seconds: seconds)
        case "devctrl":
            let did = try identifier(reader, "did")
            switch (try reader.optionalObject("attrs"), reader.value("raw")) {
            case (let attrs?, nil):
                guard !attrs.isEmpty, attrs.count <= 100 else { throw CloudBodyError(field: reader.name("attrs"), "must name 1 to 100 data points") }
                return .control(did: did, .attrs(attrs))
            case (nil, let raw?):
                guard let items = raw.arrayValue, (1...65_536).contains(items.count) else {
                    throw CloudBodyError(field: reader.name("raw"), "must be an array of 1 to 65536 bytes")
                }
                var bytes: [UInt8] = []
                for item in items {
                    guard case .int(let number) = item, let byte = UInt8(exactly: number) else {
                        throw CloudBodyError(field: reader.name("raw"), "must hold integers 0…255")
                    }
                    bytes.append(byte)
                }
                return .control(did: did, .raw(bytes))
            case (nil, nil):
                throw CloudBodyError(field: reader.name("attrs"), "or raw is required")
            case (.some, .some):
                throw CloudBodyError(field: reader.name("raw"), "cannot be sent with attrs")
            }
        default:
            throw CloudBodyError(field: reader.name("type"), "must be devctrl or delay")
        }
    }

    /// An array of groups, each an array of objects.
    private static func groups<Element>(
        _ reader: BodyReader, _ key: String, maximum: Int, _ element: (BodyReader) throws(CloudBodyError) -> Element
    ) throws(CloudBodyError) -> [[Element]] {
        guard let value = reader.value(key) else { return [] }
        guard let groups = value.arrayValue, groups.count <= maximumGroups else {
            throw CloudBodyError(field: reader.name(key), "must be an array of at most \(maximumGroups) groups")
        }
        var result: [[Element]] = []
        for (index, group) in groups.enumerated() {
            let name = "\(key)[\(index)]"
            guard let items = group.arrayValue, (1...maximum).contains(items.count) else {
                throw CloudBodyError(field: reader.name(name), "must be an array of 1 to \(maximum) entries")
            }
            var entries: [Element] = []
            for (position, item) in items.enumerated() {
                guard case .object(let object) = item else { throw CloudBodyError(field: reader.name("\(name)[\(position)]"), "must be an object") }
                entries.append(try element(BodyReader(object: object, path: reader.name("\(name)[\(position)]."))))
            }
            result.append(entries)
        }
        return result
    }

    public var json: JSONValue {
        var object: JSONObject = [
            "name": .string(name), "remark": .string(remark), "did": .string(did), "product_key": .string(productKey), "event": .string(event.rawValue),
            "interval": .int(interval),
            "input": .array(inputs.map { ["did": .string($0.did), "product_key": .string($0.productKey), "prefix": .string($0.prefix)] }),
            "condition": .array(
                conditions.map { group in
                    .array(group.map { ["left": .string($0.left.description), "opt": .string($0.op.rawValue), "right": .string($0.right.description)] })
                }),
            "output": .array(outputs.map { group in .array(group.map(Self.json)) }),
        ]
        if let eventAttr { object["event_attr"] = ["attr_name": .string(eventAttr.name), "value": eventAttr.occurs ? "1" : "0"] }
        return .object(object)
    }

    private static func json(_ step: RuleStep) -> JSONValue {
        switch step {
        case .delay(let seconds): ["type": "delay", "delay": .int(seconds)]
        case .control(let did, .attrs(let attrs)): ["type": "devctrl", "did": .string(did), "attrs": .object(attrs)]
        case .control(let did, .raw(let bytes)): ["type": "devctrl", "did": .string(did), "raw": .array(bytes.map { .int(Int64($0)) })]
        }
    }
}

/// A rule as `GET /app/rules` lists it: its fields and `rule_id`, with Tether's times (Unix
/// seconds) and when it last fired (Unix milliseconds).
public struct RuleBody: Sendable, Hashable {
    public var id: String
    public var fields: RuleFieldsBody
    public var createdAt: Int64
    public var updatedAt: Int64
    public var lastFiredAt: Int64?

    public init(id: String, fields: RuleFieldsBody, createdAt: Int64, updatedAt: Int64, lastFiredAt: Int64? = nil) {
        self.id = id
        self.fields = fields
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastFiredAt = lastFiredAt
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            id: try reader.text("rule_id"), fields: try RuleFieldsBody(json: json), createdAt: try reader.optionalInt("created_at") ?? 0,
            updatedAt: try reader.optionalInt("updated_at") ?? 0, lastFiredAt: try reader.optionalInt("last_fired_at"))
    }

    public var json: JSONValue {
        guard case .object(var object) = fields.json else { return fields.json }
        object["rule_id"] = .string(id)
        object["created_at"] = .int(createdAt)
        object["updated_at"] = .int(updatedAt)
        object["last_fired_at"] = lastFiredAt.map(JSONValue.int) ?? .null
        return .object(object)
    }
}

/// A data point a rule may read or write (`GET /app/rules/params`).
public struct RuleParamBody: Sendable, Hashable {
    public var name: String
    public var displayName: String
    /// `bool`, `int`, `enum` or `binary` (the reference's four; numbers with decimals are `int`
    /// there, text is `binary`).
    public var type: String
    public var labels: [String]

    public init(name: String, displayName: String, type: String, labels: [String] = []) {
        self.name = name
        self.displayName = displayName
        self.type = type
        self.labels = labels
    }

    public init(json: JSONValue) throws(CloudBodyError) {
        let reader = try BodyReader(json)
        self.init(
            name: try reader.text("name"), displayName: try reader.optionalString("display_name") ?? "", type: try reader.text("type"),
            labels: try reader.optionalStrings("enum") ?? [])
    }

    public var json: JSONValue {
        ["name": .string(name), "display_name": .string(displayName), "type": .string(type), "enum": .array(labels.map(JSONValue.string))]
    }
}
